# SPDX-License-Identifier: MIT
# Helpers (sourced) that build small clusters of network namespaces for the
# runtime's tests and benchmarks: one namespace per rank, veth "cables" with
# their own /30 named en2, en3... in each rank (so the device matrix names
# rdma_en2...), and a management bridge (in a namespace of its own) on en0
# where the coordinator lives. Everything is created under $RT_PREFIX and
# removed by rt_down.
#
#   rt_up N           namespaces ${RT_PREFIX}gK-0..N-1 and the bridge (K counts clusters)
#   rt_cable A B      one more cable between ranks A and B
#   rt_matrix FILE [list]  write the device matrix (cells as strings when
#                     a pair has one cable, unless "list" is given)
#   rt_settle         wait until every cable has its carrier
#   rt_exec I CMD...  run CMD in rank I's namespace
#   rt_down           kill what runs inside, delete every namespace
RT_BASE=${RT_PREFIX:-rt$$}
RT_PREFIX=$RT_BASE
rt_gen=0
RT_MGMT=10.234.0		# inside our namespaces only
rt_n=0
rt_subnet=0
declare -A rt_cell rt_nif

rt_ns() { echo "${RT_PREFIX}-$1"; }

rt_up() {
	rt_n=$1
	# fresh names for every cluster: a deleted namespace's name may linger
	rt_gen=$((rt_gen + 1))
	RT_PREFIX="${RT_BASE}g$rt_gen"
	ip netns add "${RT_PREFIX}-m" || return 1
	ip -n "${RT_PREFIX}-m" link add br0 type bridge || return 1
	ip -n "${RT_PREFIX}-m" link set br0 up
	ip -n "${RT_PREFIX}-m" link set lo up
	for i in $(seq 0 $((rt_n - 1))); do
		ip netns add "$(rt_ns "$i")" || return 1
		ip -n "$(rt_ns "$i")" link set lo up
		ip -n "$(rt_ns "$i")" link add en0 type veth peer name "p$i" \
		    netns "${RT_PREFIX}-m" || return 1
		ip -n "${RT_PREFIX}-m" link set "p$i" master br0 up
		ip -n "$(rt_ns "$i")" addr add "$RT_MGMT.$((10 + i))/24" dev en0
		ip -n "$(rt_ns "$i")" link set en0 up
		rt_nif[$i]=2
	done
}

rt_cable() {
	local a=$1 b=$2 ia ib net
	ia="en${rt_nif[$a]}"
	ib="en${rt_nif[$b]}"
	rt_nif[$a]=$((rt_nif[$a] + 1))
	rt_nif[$b]=$((rt_nif[$b] + 1))
	net="10.234.$((1 + rt_subnet / 64)).$(( (rt_subnet % 64) * 4))"
	rt_subnet=$((rt_subnet + 1))
	ip -n "$(rt_ns "$a")" link add "$ia" type veth peer name "$ib" \
	    netns "$(rt_ns "$b")" || return 1
	ip -n "$(rt_ns "$a")" addr add "${net%.*}.$(( ${net##*.} + 1))/30" dev "$ia"
	ip -n "$(rt_ns "$b")" addr add "${net%.*}.$(( ${net##*.} + 2))/30" dev "$ib"
	ip -n "$(rt_ns "$a")" link set "$ia" up
	ip -n "$(rt_ns "$b")" link set "$ib" up
	rt_cell[$a,$b]="${rt_cell[$a,$b]:+${rt_cell[$a,$b]} }rdma_$ia"
	rt_cell[$b,$a]="${rt_cell[$b,$a]:+${rt_cell[$b,$a]} }rdma_$ib"
}

rt_matrix() {
	local file=$1 list=${2:-} r p row cell names
	{
		printf '['
		for r in $(seq 0 $((rt_n - 1))); do
			row=""
			for p in $(seq 0 $((rt_n - 1))); do
				names=${rt_cell[$r,$p]:-}
				if [ -z "$names" ]; then
					cell=null
				elif [ -z "$list" ] && [ "${names% *}" = "$names" ]; then
					cell="\"$names\""
				else
					cell="[\"${names// /\", \"}\"]"
				fi
				row="${row:+$row, }$cell"
			done
			printf '%s[%s]' "$([ "$r" -gt 0 ] && echo ', ')" "$row"
		done
		printf ']\n'
	} >"$file"
	rt_settle
}

# wait (up to 3 s) until every interface of every rank is operationally up
rt_settle() {
	local i tries
	for i in $(seq 0 $((rt_n - 1))); do
		tries=0
		while ip -n "$(rt_ns "$i")" -o link show 2>/dev/null | grep ' en[0-9]' |
		    grep -qv 'state UP' && [ "$tries" -lt 30 ]; do
			sleep 0.1
			tries=$((tries + 1))
		done
	done
}

rt_exec() {
	local i=$1
	shift
	ip netns exec "$(rt_ns "$i")" "$@"
}

rt_pids() {
	local ns
	for ns in $(ip netns list | awk '{print $1}' | grep "^${RT_BASE}g"); do
		ip netns pids "$ns" 2>/dev/null
	done
}

rt_down() {
	local ns p
	for p in $(rt_pids); do kill -9 "$p" 2>/dev/null; done
	for ns in $(ip netns list | awk '{print $1}' | grep "^${RT_BASE}g"); do
		ip netns del "$ns" 2>/dev/null
	done
	rt_cell=()
	rt_nif=()
	rt_n=0
	rt_subnet=0
}
