#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A thread that is blocked for the whole recording window is still wall-clock
# time: sleepburn's main thread sits in pthread_join() (futex) from start to
# exit, so with `-p PID -d 3` it never switches, and a profiler that only
# accounts intervals it saw begin and end reports nothing for it. wprof must
# report ~3 s off-CPU for the "sleepburn" thread (within 100 ms: the -d timer
# and the window edges; this weight has no sampling error) with its futex
# wait stack.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn"
pid=$BG_PID
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"

run_wprof rec record -p "$pid" -d 3 -o "$TMP/out.folded"
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

main_off=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' sleepburn)
main_on=$(fold_sum "$TMP/out.folded" on-cpu sleepburn)
log "main thread: off $main_off us, on $main_on us"
check_near "blocked main thread's off-CPU weight vs the 3 s window (us)" "$main_off" 3000000 100000
check "blocked main thread has no on-CPU weight" test "$main_on" -eq 0
futex=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' sleepburn '.*futex.*')
check_ge "share of its off-CPU weight under a *futex* frame (%)" \
	"$(calc "100 * $futex / ($main_off ? $main_off : 1)")" 90
finish
