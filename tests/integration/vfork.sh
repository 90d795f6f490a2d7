#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A vfork parent's user stack is walked as it leaves the CPU, never left to
# its resume: its child runs on that stack meanwhile. vforker vforks 50
# children one after the other; each naps 10 ms in child_nap() (called
# from vfork_once(), on its parent's stack) and exits, while the parent
# waits in the kernel for it (killable: off-cpu:disk).
# `wprof record -- vforker -n 50 -m 10`. Ground truth is the workload's
# own: 50 children ran ("vforked 50"), each napped 10 ms, and the parent
# waited for each at least that long.
# Checks: exit 0; the summary counts at least 50 user stacks walked at
# switch-out (one per wait for a child: the other blocks here are plain
# interruptible sleeps, walked at resume); the parent's wait under vfork
# adds up to at least 50 x 10 ms and at most the run's wall time, >= 99% of
# it walked whole, _start to main;vfork_once;vfork (libc's vfork holds its
# return address in rdi then); the children's sleep is named
# vfork_once;child_nap, at least 50 x 10 ms.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload vforker

run_wprof rec record --stats -o "$TMP/out.folded" -- "$WORKLOADS/vforker" -n 50 -m 10
check_wprof_ok rec
check "vforker ran its 50 children ($(cat "$TMP/rec.out"))" grep -qx 'vforked 50' "$TMP/rec.out"
check_folded "$TMP/out.folded"
early=$(sed -n 's/.*user stacks: \([0-9][0-9]*\) walked at switch-out.*/\1/p' "$TMP/rec.err")
check_ge "user stacks walked at switch-out (one per vfork wait)" "${early:-0}" 50
# libc's wrapper, by whichever of its names the symbol table gives
waited=$(grep '^off-cpu:disk;' "$TMP/out.folded" | grep -E ';(__)?vfork;' |
	awk '{ s += $NF } END { print s + 0 }')
check_ge "the parent's wait under vfork (us)" "$waited" 500000
# glibc's vfork keeps its return address in rdi while the child runs (its
# CFI says so): the walk follows that, from the thread's first frame on
# (a wait in the program's first moments, before wprof has read its maps,
# is walked by frame pointers only, and says so: left out)
rule=$(grep -E ';(__)?vfork;' "$TMP/out.folded" | grep -c 'unsupported unwind rule')
check "no stack under vfork is cut for its unwind rule ($rule are)" test "$rule" -eq 0
walked=$(grep '^off-cpu:disk;' "$TMP/out.folded" | grep -E ';(__)?vfork;' |
	grep -v '\[frame pointers only' | awk '{ s += $NF } END { print s + 0 }')
whole=$(grep '^off-cpu:disk;' "$TMP/out.folded" | grep -E ';(__)?vfork;' |
	grep -E '^off-cpu:disk;[^;]*;_start;.*;main;vfork_once;(__)?vfork;' |
	awk '{ s += $NF } END { print s + 0 }')
check_ge "share of that wait walked by CFI from _start under main;vfork_once;vfork (%)" \
	"$(calc "100 * $whole / ($walked ? $walked : 1)")" 99
check_ge "that wait walked by CFI (us)" "$walked" 400000
check_le "the parent's wait under vfork vs the run's wall time (us)" "$waited" $((ELAPSED_MS * 1000))
napped=$(grep '^off-cpu:sleep;' "$TMP/out.folded" | grep ';vfork_once;child_nap;' |
	awk '{ s += $NF } END { print s + 0 }')
check_ge "the children's sleep in vfork_once;child_nap (us)" "$napped" 500000
finish
