#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The stack cache (bpf/sched.bpf.c) reuses a thread's last stacks when it
# leaves the CPU where it left it last time, and walks every 32nd hit anyway
# to check. The check's verdicts are the ground truth here: on workloads that
# block in the same places again and again -- synchronous writes (disk waits,
# whose kernel paths vary: only the user stack may be reused) and a pipe
# ping-pong (interruptible sleeps: both stacks reused) -- the cache must
# hit (else it costs without helping) and its checks must agree: at most 2%
# mismatches, plus 1 for small counts. A fingerprint that misses a
# difference shows up here as mismatches.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload diskwrite
require_workload mixed

cache_line() { # NAME -> "hits checks mismatches"
	sed -n 's/^wprof: stack cache: \([0-9]*\) switches reused.*, \([0-9]*\) of them walked to check, \([0-9]*\) mismatches$/\1 \2 \3/p' \
		"$TMP/$1.err"
}

run_wprof dw record -d 20 -o /dev/null -- \
	"$WORKLOADS/diskwrite" -s 4 -n 2 -f "$(disk_path cache.dat)" -r "$TMP/dw.report"
check_wprof_ok dw
run_wprof mx record -d 20 -o /dev/null -- "$WORKLOADS/mixed" -n 2
check_wprof_ok mx
for run in dw mx; do
	read -r hits checks mismatches <<<"$(cache_line $run)"
	log "$run: $hits reused, $checks checked, $mismatches mismatches"
	check_ge "$run: switches that reused their stacks" "$hits" 100
	check_le "$run: stack cache mismatches" "$mismatches" "$(calc "0.02 * $checks + 1")"
done
finish
