#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Whole on-CPU stacks from a new program's first moments, before wprof has
# read its maps: `wprof record -F 4999 -- spawner -n 40 -p startburn`. Each
# startburn burns 30 ms of CPU from the start of main in main -> burn_outer
# -> libc's qsort -> cmp_ints; qsort is built without frame pointers, so a
# frame-pointer walk from cmp_ints loses main and burn_outer. The samples
# taken before its tables are ready hold a copy of the stack that user space
# walks once they are (struct wprof_held). Truth is the workload's source:
# every sample in cmp_ints is under _start;__libc_start_main;
# __libc_start_call_main;main;burn_outer (that libc frame is libc.so.6+0x...
# without libc6-dbg). Checks: 40 children ran
# ("spawned 40"); the burn has >= 0.2 s of samples in cmp_ints; >= 99.7% of that
# weight is from _start under main;burn_outer (frame pointers only, about
# 1-2% of it was not: the first ~0.2 ms of each run); the loader (before
# main) has samples, and none is cut (its _start has no CFI: the entry
# point with a zeroed frame pointer is the outermost frame), but in the lazy
# binder, whose frame (CFA in rbx) wprof does not walk through; the JSON's
# counters say stacks were walked from a copy (there were samples to hold).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload spawner
require_workload startburn

F=$TMP/out.folded
run_wprof rec record -F 4999 -o "$F" -o "$TMP/out.json" -- \
	"$WORKLOADS/spawner" -n 40 -p "$WORKLOADS/startburn"
check_wprof_ok rec
check "spawner ran its 40 children ($(cat "$TMP/rec.out"))" grep -qx 'spawned 40' "$TMP/rec.out"
check_folded "$F"
grep -E '^on-cpu;startburn;' "$F" | grep -E ';cmp_ints( |;)' >"$TMP/burn" || true
burn=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/burn")
# one libc frame between: __libc_start_call_main, or libc.so.6+0x... without libc6-dbg
whole=$(grep -E '^on-cpu;startburn;_start;__libc_start_main;[^;]+;main;burn_outer;' \
	"$TMP/burn" | grep -vE '\[(cut|frame pointers only)' | awk '{ s += $NF } END { print s + 0 }')
log "startburn in cmp_ints: $burn us, $whole us of it whole"
grep -E '\[(cut|frame pointers only)' "$TMP/burn" | cut -c1-240 | head -5 | sed 's/^/#   not whole: /'
check_ge "startburn's samples in cmp_ints (us)" "$burn" 200000
check_ge "share of them from _start under main;burn_outer (%)" \
	"$(calc "100 * $whole / ($burn ? $burn : 1)")" 99.7
# the loader's code, before main: its lines' root is the loader's entry
# (ld-linux-x86-64.so.2+0x...; named only with libc6-dbg), or a cut before it
loader_lines()
{
	grep -E '^on-cpu;startburn;(\[[^]]*\];)?ld-linux-x86-64[.]so[.]2[+]0x' "$F"
}
loader=$(loader_lines | awk '{ s += $NF } END { print s + 0 }')
# a sample in the lazy binder (_dl_runtime_resolve_*, its CFA in rbx: a rule
# wprof does not follow, counted) is cut under it, whatever its start
resolver=$(loader_lines | grep -E '^on-cpu;startburn;\[cut: unsupported unwind rule\];ld-linux' |
	awk '{ s += $NF } END { print s + 0 }')
loader_cut=$(loader_lines | grep -E '^on-cpu;startburn;\[cut' |
	grep -vE '^on-cpu;startburn;\[cut: unsupported unwind rule\];ld-linux' |
	awk '{ s += $NF } END { print s + 0 }')
[ "$resolver" -eq 0 ] || log "startburn in the lazy binder, cut there: $resolver us"
log "startburn in the loader: $loader us, $loader_cut us of it cut"
check "the loader had samples ($loader us)" test "$loader" -gt 0
check "none of the loader's samples cut ($loader_cut of $loader us)" test "$loader_cut" -eq 0
held=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["counters"]["held_walked"])' "$TMP/out.json")
log "held stacks walked: $held"
check "stacks taken before the code was read were walked from a copy ($held)" \
	test "${held:-0}" -gt 0
finish
