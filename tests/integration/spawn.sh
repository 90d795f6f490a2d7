#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A parent caught in clone3 is walked whole. spawner starts 200 children
# with posix_spawn(), one after the other, from spawn_once(); glibc starts
# each with clone3 (CLONE_VM | CLONE_VFORK), and the parent waits in that
# syscall until its child has exec'd (killable: off-cpu:disk), its user pc
# just after the syscall instruction of glibc's clone3 wrapper, which ends
# its FDE before the syscall (the child's rules would be other): no CFI
# there. The code itself shows nothing moves rsp from the syscall to the
# ret after it, so the walk goes on for the parent (rax not 0), and ends
# for a child (its first frame). `wprof record -- spawner -n 200`. Ground
# truth is the workload's own: 200 children ran ("spawned 200"), and the
# parent's stack in clone3 is main -> spawn_once -> posix_spawn -> ...
# Checks: exit 0; the parent waited in clone3 (kernel_clone); of that wait,
# where walked by CFI (the program's first moments are walked by frame
# pointers only, and say so), >= 99% from _start under main;spawn_once, and
# none of it cut.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload spawner

F=$TMP/out.folded
run_wprof rec record -o "$F" -- "$WORKLOADS/spawner" -n 200
check_wprof_ok rec
check "spawner ran its 200 children ($(cat "$TMP/rec.out"))" grep -qx 'spawned 200' "$TMP/rec.out"
check_folded "$F"
# the parent's time in clone3, by its kernel frames, walked by CFI
grep -E '^off-cpu:[a-z]+;spawner;' "$F" | grep -E 'clone3_\[k\];kernel_clone_\[k\]' |
	grep -v '\[frame pointers only' >"$TMP/clone3" || true
in_clone=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/clone3")
whole=$(grep -E '^off-cpu:[a-z]+;spawner;_start;.*;main;spawn_once;' "$TMP/clone3" |
	grep -vc '\[cut' || true)
whole_us=$(grep -E '^off-cpu:[a-z]+;spawner;_start;.*;main;spawn_once;' "$TMP/clone3" |
	grep -v '\[cut' | awk '{ s += $NF } END { print s + 0 }')
cut=$(grep -c '\[cut' "$TMP/clone3" || true)
log "spawner in clone3: $in_clone us walked by CFI, $whole_us us of it whole ($whole lines), $cut lines cut"
sed 's/^/#   /' "$TMP/clone3" | cut -c1-300 | head -5
check "the parent waited in clone3 ($in_clone us walked by CFI)" test "$in_clone" -gt 0
check_ge "share of that wait from _start under main;spawn_once (%)" \
	"$(calc "100 * $whole_us / ($in_clone ? $in_clone : 1)")" 99
check "none of it cut ($cut lines are)" test "$cut" -eq 0
finish
