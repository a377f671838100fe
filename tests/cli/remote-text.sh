#!/bin/sh
# SPDX-License-Identifier: MIT
# Text from hosts and devices is data: a saved probe of four Mac Studios
# whose outputs carry terminal escapes (a peer Mac's name as the device at
# the other end of a cable reports it, a receptacle id, the model, uname)
# is replayed; no control character but the newline and the tab reaches
# standard output, standard error or the DOT text, and the escaped form
# (\x1b) shows the text did arrive.
. "${top_srcdir:-.}/tests/lib/tap.sh"

src=$top_srcdir/data/examples/studio-mesh4
b=$t/b
cp -r "$src" "$b"
python3 - "$b" <<'PY'
import json, sys
b = sys.argv[1]
p = b + "/m3-ultra-1/system_profiler-SPThunderboltDataType.json"
j = json.load(open(p))
buses = j["SPThunderboltDataType"]
# a peer that reports no domain UUID and a name with an escape; on another
# cable, a receptacle id with an escape
cabled = [bus for bus in buses if bus.get("_items")]
item = cabled[0]["_items"][0]
item.pop("domain_uuid_key", None)
item["_name"] = "Mac\u001b]0;pwned\u0007Studio"
cabled[1]["receptacle_1_tag"]["receptacle_id_key"] = "6\u001b[2J"
json.dump(j, open(p, "w"), indent=1)
open(b + "/m3-ultra-2/sysctl-hw.model.txt", "w").write("Mac\u001b[31m\u009b1mStudio\n")
PY
mkdir -p "$t/u/evil"
printf 'Evil\033[31m\n' >"$t/u/evil/uname.txt"

# no_controls FILE: 0 when FILE holds no control character but \n and \t
no_controls() {
	LC_ALL=C tr -d '\000-\010\013-\037\177' <"$1" | cmp -s - "$1"
}

"$JACCL_CONFIG" --from "$b" --dot -v >"$t/dot" 2>"$t/err" </dev/null
no_controls "$t/dot"
ok $? "DOT -v: no control character from the hosts"
grep -q 'label="m3-ultra-2' "$t/dot"
ok $? "DOT -v: the host whose model has an escape is drawn"
! grep -q "$(printf '\302\233')" "$t/dot"
ok $? "DOT -v: no C1 control (CSI as U+009B) either"
no_controls "$t/err"
ok $? "messages: no control character from the hosts"
grep -q 'Mac\\x1b\]0;pwned\\x07Studio' "$t/err"
ok $? "messages: the peer's name is there, escaped"
grep -q 'Thunderbolt 6\\x1b\[2J' "$t/err"
ok $? "messages: the receptacle id is there, escaped"
"$JACCL_CONFIG" --from "$b" --dot >"$t/dot2" 2>/dev/null </dev/null
no_controls "$t/dot2"
ok $? "mlx's DOT: no control character from the hosts"
"$JACCL_CONFIG" --from "$t/u" >/dev/null 2>"$t/err2" </dev/null
no_controls "$t/err2"
ok $? "uname: no control character reaches the terminal"
grep -q "uname -s says 'Evil\\\\x1b\[31m'" "$t/err2"
ok $? "uname: shown escaped"
done_testing
