# SPDX-License-Identifier: MIT
# Helpers (sourced, after tests/rt/netns.sh) to run MLX's own JACCL programs
# on the ranks of a namespace cluster over softverbs, each rank with only
# the environment mlx.launch gives a JACCL job. JACCL opens its verbs
# library as "librdma.dylib": a link of that name to softverbs in a folder
# on LD_LIBRARY_PATH is the whole bridge.
#
#   jaccl_need SIZE      skip_all with the reason unless JACCL (SIZE frames)
#                        was built for this tree (mk/jaccl.am)
#   jaccl_ranks SIZE PROG ARGS...   run jaccl_PROG on ranks 0..rt_n-1 with
#                        $t/devs.json (a ring when JRING=1); each rank's
#                        output in $t/oR and $t/eR, its status in $stR
#   jaccl_show           diagnostics: status and stderr of every rank
jaccl_port=$((33000 + $$ % 1000))

jaccl_need() {
	local size=$1
	[ -n "${SOFTVERBS_LIB:-}" ] && [ -f "$SOFTVERBS_LIB" ] ||
		skip_all "no softverbs library in this build"
	[ -n "${JACCL_BUILD:-}" ] || skip_all "JACCL_BUILD not set (run through make check)"
	if [ ! -f "$JACCL_BUILD/$size.stamp" ]; then
		if [ -f "$JACCL_BUILD/$size.why" ]; then
			skip_all "$(cat "$JACCL_BUILD/$size.why")"
		fi
		skip_all "JACCL ($size frames) is not built in this tree (sanitizer builds leave it out: JACCL is not instrumented and cannot load their softverbs)"
	fi
	mkdir -p "$t/lib"
	ln -sf "$SOFTVERBS_LIB" "$t/lib/librdma.dylib"
}

# jaccl_accepted N: wait (up to 30 s) until rank 0 listens on jaccl_port and
# has accepted N connections. JACCL's coordinator listens with a backlog of
# 0: on a loaded Linux machine, ranks that connect at the same moment can
# find the accept queue full and get their connection reset, and rank 0 then
# waits forever for them; starting the ranks one connection at a time keeps
# that out of the tests (mlx.launch itself starts them together).
jaccl_accepted() {
	local i=0 est q
	while [ "$i" -lt 600 ]; do
		q=$(rt_exec 0 ss -Hltn "( sport = :$jaccl_port )" 2>/dev/null | awk '{ print $2; exit }')
		est=$(rt_exec 0 ss -Htn state established "( sport = :$jaccl_port )" 2>/dev/null | wc -l)
		[ "$q" = 0 ] && [ "$est" -ge "$1" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

jaccl_ranks() {
	local size=$1 prog=$2 r
	shift 2
	jaccl_port=$((jaccl_port + 1))
	for r in $(seq 0 $((rt_n - 1))); do
		[ "$r" = 0 ] || jaccl_accepted $((r - 1))
		rt_exec "$r" env -i PATH="$PATH" LD_LIBRARY_PATH="$t/lib" \
		    ${SOFTVERBS_DEBUG:+SOFTVERBS_DEBUG=$SOFTVERBS_DEBUG} \
		    MLX_RANK="$r" MLX_IBV_DEVICES="$t/devs.json" \
		    MLX_JACCL_COORDINATOR="$RT_MGMT.10:$jaccl_port" \
		    ${JRING:+MLX_JACCL_RING=1} \
		    timeout "${JACCL_TIMEOUT:-300}" "$JACCL_BUILD/$size/jaccl_$prog" "$@" \
		    >"$t/o$r" 2>"$t/e$r" &
		eval "jpid$r=\$!"
	done
	for r in $(seq 0 $((rt_n - 1))); do
		eval "wait \$jpid$r"
		eval "st$r=\$?"
	done
}

jaccl_all_zero() {
	local r s
	for r in $(seq 0 $((rt_n - 1))); do
		eval "s=\$st$r"
		[ "$s" = 0 ] || return 1
	done
}

jaccl_show() {
	local r
	for r in $(seq 0 $((rt_n - 1))); do
		diag "rank $r: status $(eval echo \$st$r)"
		grep -v 'Connection attempt' "$t/e$r" | head -5 | while IFS= read -r l; do diag "  $l"; done
	done
}
