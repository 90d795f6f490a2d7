#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Where an interval's wait for a CPU comes from. By default, from the
# scheduler's own count (sched_info, read as the thread gets the CPU): no
# program runs at wakeups, but --wakers's at sched_waking for the wakers'
# stacks. On
# kernels where the programs cannot reach a task's run queue
# (CONFIG_FAIR_GROUP_SCHED off), a program on sched_wakeup times each wakeup
# instead; WPROF_RUNQ=wakeup forces that here, and the tests that hold
# per-thread run-queue and blocked time to ground truth run again on it:
# - real_schedstat: on-CPU and run-queue time against schedstat;
# - runqueue: threads that share a CPU, against their own schedstat;
# - disk_write: blocked time inside the calls, against the workload's clock;
# - mutex: time under the lock frames, against the workload's own timing.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

run_wprof default record -a -d 0.3 --stats -o "$TMP/default.folded"
check_wprof_ok default
check "by default, no program runs at wakeups" \
	sh -c "! grep -Eq '^wprof: bpf [a-z]*_wak(eup|ing) ' '$TMP/default.err'"
check "by default, the start line names no wakeup timing" \
	sh -c "! grep -q 'run-queue waits timed from wakeups' '$TMP/default.err'"
run_wprof wakers record -a -d 0.3 --wakers --stats -o "$TMP/wakers.folded"
check_wprof_ok wakers
check "--wakers runs the waking program" grep -q '^wprof: bpf tp_waking ' "$TMP/wakers.err"
check "--wakers runs no wakeup program" sh -c "! grep -q '^wprof: bpf tp_wakeup ' '$TMP/wakers.err'"

export WPROF_RUNQ=wakeup
run_wprof forced record -a -d 0.3 --stats -o "$TMP/forced.folded"
check_wprof_ok forced
check "WPROF_RUNQ=wakeup: the start line says so" \
	grep -q '^wprof: recording with tp_btf sched events (run-queue waits timed from wakeups)' \
	"$TMP/forced.err"
check "WPROF_RUNQ=wakeup: the wakeup program runs" grep -q '^wprof: bpf tp_wakeup ' "$TMP/forced.err"

rerun_tests "with run-queue waits timed from wakeups" real_schedstat runqueue disk_write mutex

WPROF_RUNQ=sometimes "$WPROF" record -a -d 0.3 -o /dev/null >"$TMP/bad.out" 2>"$TMP/bad.err"
RC=$?
check "WPROF_RUNQ=sometimes: exit 2, one line (got $RC: $(cat "$TMP/bad.err"))" \
	test "$RC" -eq 2 -a "$(wc -l <"$TMP/bad.err")" -eq 1
check "WPROF_RUNQ=sometimes: the line names the variable" grep -q '^wprof: WPROF_RUNQ=' "$TMP/bad.err"
finish
