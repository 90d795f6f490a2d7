#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Live threads' entries are in an array (bpf/common.bpf.h: thread_slots):
# each in its tid's slot, or, where another thread has that, in the
# overflow part its tid hashes to; an ended thread's moves to the hash user
# space drains. On this machine pid_max fits the first part, so few threads
# ever share a slot: WPROF_THREAD_SLOTS=few gives the first part 64 slots,
# and nearly every thread's entry is in the overflow part. With that:
# - a machine-wide recording lists every thread it saw, more than 64, with
#   nothing lost (no thread map full, no slot held too long);
# - the tests that hold per-thread times and stacks to ground truth run
#   again: real_schedstat (on-CPU and run-queue time against schedstat),
#   json_sums (stacks add up to each thread's times), tid_reuse (a tid
#   reused within one recording is two threads, with their own times),
#   mutex and pid; churn in thread_slots_churn.sh (its run alone takes
#   most of the runner's 120 s a script: together they came to 114-120 s).
# And a value it does not know is refused in one line, exit 2.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

export WPROF_THREAD_SLOTS=few
run_wprof few record -a -d 0.5 -f json -o "$TMP/few.json"
check_wprof_ok few
read -r nthreads lost < <(json_eval "$TMP/few.json" '"%d %s" % (len(threads()),
	",".join("%s=%d" % (k, j["lost"][k]) for k in ("thread_map_full", "thread_slot_busy")))')
check "few slots: more threads than first slots recorded ($nthreads)" test "${nthreads:-0}" -gt 64
check "few slots: nothing lost ($lost)" test "$lost" = "thread_map_full=0,thread_slot_busy=0"

rerun_tests "with 64 first thread slots" real_schedstat json_sums tid_reuse mutex pid

WPROF_THREAD_SLOTS=many "$WPROF" record -a -d 0.3 -o /dev/null >"$TMP/bad.out" 2>"$TMP/bad.err"
RC=$?
check "WPROF_THREAD_SLOTS=many: exit 2, one line (got $RC: $(cat "$TMP/bad.err"))" \
	test "$RC" -eq 2 -a "$(wc -l <"$TMP/bad.err")" -eq 1
check "WPROF_THREAD_SLOTS=many: the line names the variable" \
	grep -q '^wprof: WPROF_THREAD_SLOTS=' "$TMP/bad.err"
finish
