#!/bin/sh
# SPDX-License-Identifier: MIT
# Library code never prints: only the command layer (src/cli/libjcli.a)
# may write to the standard streams. Every object of src/libjaccl.a is read
# with nm, and an undefined reference to any of these fails the test,
# naming the object and the symbol:
#   - the standard streams: stdout, stderr (a library writes only to a
#     FILE * its caller gives it, or to a file it opens);
#   - the printf family, which formats straight onto a stream: printf,
#     vprintf, fprintf, vfprintf, dprintf, vdprintf and their _FORTIFY_SOURCE
#     forms (__printf_chk, ...); the library formats into memory (snprintf,
#     struct jc_buf) and says what went wrong in its struct jc_err;
#   - the printers of the C library that can only mean the terminal:
#     puts, putchar, perror, psignal, psiginfo, and err(3), warn(3), error(3).
# Allowed: fputs, fputc, fwrite, putc and json_dumpf to a FILE * the caller
# passed in or the library opened (a bundle, a DOT graph, a hostfile): bytes
# written where the caller said, not printing. The compiler may turn a
# fprintf of a constant into fwrite; that is a copy of bytes to the same
# FILE * and stays allowed.
. "${top_srcdir:-.}/tests/lib/tap.sh"

lib=${top_builddir:-.}/src/libjaccl.a
symbols='stdout stderr printf vprintf fprintf vfprintf dprintf vdprintf
__printf_chk __vprintf_chk __fprintf_chk __vfprintf_chk __dprintf_chk
__vdprintf_chk puts putchar putchar_unlocked perror psignal psiginfo
err errx warn warnx verr verrx vwarn vwarnx error error_at_line'

# Objects still printing, each waiting for its own change; remove an entry
# as soon as its object is clean (the test then keeps it clean).
# (none today)
allow=''

command -v nm >/dev/null 2>&1 || skip_all "nm (binutils) is not installed"

# offenders ARCHIVE: "object: symbol" for each forbidden reference
offenders() {
	nm -A -u "$1" 2>/dev/null | awk -v syms="$symbols" '
		BEGIN { n = split(syms, s, /[ \n]+/); for (i = 1; i <= n; i++) bad[s[i]] = 1 }
		{ sym = $NF; sub(/@.*/, "", sym)
		  split($1, p, ":"); obj = p[2]
		  if (sym in bad) print obj ": " sym }' | sort -u
}

# The check bites: an object that prints is found, by name and symbol.
cc=${CC:-cc}
printf '#include <stdio.h>\nvoid say(int v) { fprintf(stderr, "%%d\\n", v); }\n' >"$t/loud.c"
printf 'int quiet(int v) { return v + 1; }\n' >"$t/quiet.c"
if $cc -O2 -c -o "$t/loud.o" "$t/loud.c" 2>/dev/null &&
    $cc -O2 -c -o "$t/quiet.o" "$t/quiet.c" 2>/dev/null &&
    ar cr "$t/test.a" "$t/loud.o" "$t/quiet.o" 2>/dev/null; then
	got=$(offenders "$t/test.a" | tr '\n' ' ')
	case $got in
	*"loud.o: stderr"*) ok 0 "a printing object is found, by object and symbol" ;;
	*) ok 1 "a printing object is found, by object and symbol"; diag "got: $got" ;;
	esac
	case $got in
	*quiet.o*) ok 1 "a quiet object is not" ;;
	*) ok 0 "a quiet object is not" ;;
	esac
else
	skip "no C compiler ($cc) to build the objects that prove the check"
	skip "no C compiler ($cc) to build the objects that prove the check"
fi

if [ ! -f "$lib" ]; then
	ok 1 "the library exists: $lib"
	done_testing
	exit
fi
nobj=$(ar t "$lib" | grep -c '\.o$')
[ "$nobj" -gt 20 ]
ok $? "the library has its objects ($nobj)"

offenders "$lib" >"$t/found"
: >"$t/bad"
: >"$t/allowed"
while IFS= read -r line; do
	obj=${line%%:*}
	case " $allow " in
	*" $obj "*) echo "$line" >>"$t/allowed" ;;
	*) echo "$line" >>"$t/bad" ;;
	esac
done <"$t/found"
[ ! -s "$t/bad" ]
ok $? "no library object prints (outside the allow-list)"
[ -s "$t/bad" ] && diag "$(sed 's/$/ (library code must not print)/' "$t/bad")"
[ -s "$t/allowed" ] && diag "still allowed: $(tr '\n' ' ' <"$t/allowed")"

# an allow-list entry whose object is clean must go
for obj in $allow; do
	grep -q "^$obj:" "$t/found"
	ok $? "allow-list entry $obj still prints (else remove it)"
done
done_testing
