#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs libFuzzer targets: sh run.sh smoke|long SRCDIR SECONDS TARGET...
#
# Each target NAME (binary fuzz_NAME) starts from its hand-picked seeds
# (SRCDIR/tests/fuzz/seeds/NAME) and its kept corpus (SRCDIR/tests/fuzz/corpus/NAME)
# and runs for SECONDS. Its log is fuzz-NAME.log, whose last line is "fuzz: ok"
# or "fuzz: FAILED"; an input that crashed is kept as fuzz-crash/NAME-crash-<sha1>.
#
# smoke  works on a copy: nothing in SRCDIR changes.
# FUZZ_ONLY="NAME ..." in the environment runs only those targets.
# long   then merges what it found into SRCDIR/tests/fuzz/corpus/NAME (-merge=1:
#        only inputs that add coverage beyond the seeds, none over FUZZ_MAX_FILE
#        bytes, 16384 by default), ready to be committed.
set -u
mode=$1 srcdir=$2 secs=$3
shift 3
max=${FUZZ_MAX_FILE:-16384}
# FUZZ_JOBS targets run at once (default: one per core); each prints its
# result when its turn comes, in the order given
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
res=$(mktemp -d)
mkdir -p fuzz-crash

# fuzz_one F NAME: run target F, its result line in $res/NAME
fuzz_one() {
	f=$1 name=$2
	seeds=$srcdir/tests/fuzz/seeds/$name
	corpus=$srcdir/tests/fuzz/corpus/$name
	log=fuzz-$name.log
	work=$(mktemp -d)
	[ -d "$seeds" ] && cp "$seeds"/* "$work"/ 2>/dev/null
	[ -d "$corpus" ] && cp "$corpus"/* "$work"/ 2>/dev/null
	if ./"$f" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=fuzz-crash/"$name"- "$work" > "$log" 2>&1; then
		echo "fuzz: ok" >> "$log"
		echo "PASS: fuzz_$name" > "$res/$name"
	else
		echo "fuzz: FAILED" >> "$log"
		{ echo "FAIL: fuzz_$name"; tail -40 "$log"; } > "$res/$name"
	fi
	if [ "$mode" = long ]; then
		merged=$(mktemp -d)
		[ -d "$seeds" ] && cp "$seeds"/* "$merged"/ 2>/dev/null
		# inputs that add coverage beyond the seeds join the merged folder
		./"$f" -merge=1 -rss_limit_mb=2048 -timeout=10 "$merged" "$work" >> "$log" 2>&1
		mkdir -p "$corpus"
		rm -f "$corpus"/*
		for x in "$merged"/*; do
			b=$(basename "$x")
			[ -e "$seeds/$b" ] && continue
			[ "$(wc -c < "$x")" -le "$max" ] && cp "$x" "$corpus/$b"
		done
		echo "corpus: $(ls "$corpus" | wc -l) inputs in tests/fuzz/corpus/$name" >> "$res/$name"
		rm -rf "$merged"
	fi
	rm -rf "$work"
}

names=
running=0
for f in "$@"; do
	name=$(basename "$f")
	name=${name#fuzz_}
	if [ -n "${FUZZ_ONLY:-}" ]; then
		case " $FUZZ_ONLY " in *" $name "*) ;; *) continue ;; esac
	fi
	names="$names $name"
	fuzz_one "$f" "$name" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait
st=0
for name in $names; do
	cat "$res/$name"
	grep -q '^PASS: ' "$res/$name" || st=1
done
rm -rf "$res"
exit $st
