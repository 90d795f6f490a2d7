#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The resume walks by BPF task work (Linux 6.18+, WPROF_RESUME_WALK=
# task_work): the switch-in of a walked interval schedules a work that walks
# the thread's user stack as it next leaves the kernel, instead of a program
# on sched_exit_tp at every switch. Checks that --stats says so, then runs
# again the tests that hold the stacks of blocked intervals to ground truth:
# - check_deferred: every deferred walk equals a walk at switch-out;
# - disk_write: a write blocks many times in one system call, each block
#   walked before the thread leaves the kernel;
# - mutex, block_count: time and counts under the right frames, against the
#   workload's own timing (the resumes the kernel gives no sched_switch
#   event for have no stack here, and those tests allow exactly those);
# - sym_nanosleep: off-CPU time named by the caller that sleeps.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
export WPROF_RESUME_WALK=task_work

if ! bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "'bpf_task_work_schedule_resume_impl'"; then
	# the kernel has none: wprof must say so in one line, and stop
	run_wprof probe record -a -d 0.3 -o "$TMP/probe.folded"
	check "without BPF task works, WPROF_RESUME_WALK=task_work is refused (exit $RC)" \
		grep -q 'WPROF_RESUME_WALK=task_work: this kernel has no BPF task works' "$TMP/probe.err"
	finish
fi
run_wprof probe record -a -d 0.3 --stats -o "$TMP/probe.folded"
check_wprof_ok probe
check "the time per switch is tp_switch's and the task work's" \
	grep -Eq '^wprof: bpf per context switch .* \(tp_switch \+ resume task work, over' \
	"$TMP/probe.err"

rerun_tests "with the resume task work" check_deferred disk_write mutex block_count sym_nanosleep
finish
