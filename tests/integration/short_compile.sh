#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Whole stacks for a program too short for wprof's main thread to see its
# libraries: `wprof record -F 999 -- gcc -O2 -c small.c`, three times. cc1
# runs some 40 ms; wprof's main thread spends most of that building cc1's
# unwind tables (a big file, read cold in every run), while cc1's loader maps
# its libraries and main runs. Its samples then hold copies of its stack,
# walkable only with maps read after the libraries came and before cc1
# exited: the held stacks' reader thread reads them (heldring.h). Before
# that, 30-45% of cc1's time in 4 of 5 runs was frame pointers only.
#
# Truth is cc1's own structure, as gdb shows it: all its code after the
# loader runs under _start -> __libc_start_main -> ... -> main, and its
# symbol table (nm) says which functions are its code. Checks: cc1 had
# >= 15 ms of on-CPU samples under main; of its samples in its own code,
# >= 95% are under _start;__libc_start_main: the rest are cut or frame
# pointers only (a recursion deeper than the 64 KiB of stack copied: about
# one sample in a hundred). Samples in the loader while it maps libraries
# (no maps read later have that code) may be frame pointers only: logged.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
command -v gcc >/dev/null || fatal "gcc not found (it builds wprof: install gcc)"
cc1=$(gcc -print-prog-name=cc1)
[ -x "$cc1" ] || fatal "gcc's cc1 not found ($cc1)"

cat >"$TMP/small.c" <<'EOF'
#include <stdio.h>
#include <string.h>
static int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }
int main(int argc, char **argv) { char b[32]; snprintf(b, sizeof(b), "%d", sum(argc)); puts(b); return strlen(argv[0]) > 4096; }
EOF
for i in 1 2 3; do
	run_wprof "rec$i" record -F 999 -o "$TMP/out$i.folded" -- \
		gcc -O2 -c "$TMP/small.c" -o "$TMP/small$i.o"
	check_wprof_ok "rec$i"
	check_folded "$TMP/out$i.folded"
done
# cc1's own functions: its symbol table, or (stripped, as Debian's) the one it
# exports for plugins; wprof prints names without parameters
{ nm -C --defined-only "$cc1" 2>/dev/null; nm -DC --defined-only "$cc1" 2>/dev/null; } | awk '$2 ~ /^[tTwW]$/ { $1 = $2 = ""; print substr($0, 3) }' |
	sed 's/(.*//' | sort -u >"$TMP/cc1.syms"
log "cc1's symbol table: $(wc -l <"$TMP/cc1.syms") function names"
read -r main_us whole_us bad_us other_us <<<"$(python3 - "$TMP/cc1.syms" "$TMP"/out[123].folded <<'PY'
import sys
syms = set(l.rstrip("\n") for l in open(sys.argv[1])) - {"_init", "_start", ""}
main = whole = bad = other = 0
for path in sys.argv[2:]:
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        f = stack.split(";")
        if f[0] != "on-cpu" or len(f) < 3 or f[1] != "cc1":
            continue
        n = int(n)
        user = [x for x in f[2:] if not x.endswith("_[k]")]
        if user[:2] == ["_start", "__libc_start_main"]:
            whole += n
            main += n if "main" in user else 0
        elif user and user[0].startswith("[") and any(x in syms or x.startswith("cc1+0x") for x in user):
            bad += n
            print("#   without its callers:", stack[:300], file=sys.stderr)
        else:
            other += n
print(main, whole, bad, other)
PY
)"
log "cc1 on-CPU: $whole_us us from _start (under main: $main_us us), $bad_us us in its code without its callers, $other_us us else (the loader, the kernel)"
check_ge "cc1's on-CPU time under main (us)" "$main_us" 15000
check_ge "share of cc1's time in its code that is under _start;__libc_start_main (%)" \
	"$(calc "100 * $whole_us / ($whole_us + $bad_us > 0 ? $whole_us + $bad_us : 1)")" 95
finish
