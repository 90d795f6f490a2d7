#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The resume walks by BPF task work (Linux 6.18+): the switch-in of a walked
# interval schedules a work that walks the thread's user stack as it next
# leaves the kernel, instead of a program on sched_exit_tp at every switch.
# The default with -p and -a (the program would run at every switch of the
# machine), not with -- CMD (whose short-lived children would lose a few
# percent of their stacks: sym_forked.sh). Checks that --stats says so, then
# runs again, with WPROF_RESUME_WALK=task_work, the tests that hold the
# stacks of blocked intervals to ground truth:
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

if ! bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "'bpf_task_work_schedule_resume_impl'"; then
	# the kernel has none: wprof must say so in one line, and stop
	WPROF_RESUME_WALK=task_work run_wprof probe record -a -d 0.3 -o "$TMP/probe.folded"
	check "without BPF task works, WPROF_RESUME_WALK=task_work is refused (exit $RC)" \
		grep -q 'WPROF_RESUME_WALK=task_work: this kernel has no BPF task works' "$TMP/probe.err"
	finish
fi
# probe NAME WHAT ERE ARGS...: a short recording with --stats whose time per
# switch is that of the programs ERE names (WHAT)
probe()
{
	local name=$1 what=$2 ere=$3

	shift 3
	run_wprof "$name" record -d 0.3 --stats -o "$TMP/$name.folded" "$@"
	check_wprof_ok "$name"
	check "$name: the time per switch is $what" \
		grep -Eq "^wprof: bpf per context switch .* \\($ere, over" "$TMP/$name.err"
}

sleep 30 &
idle=$!
probe p-default "tp_switch's and the task work's" 'tp_switch \+ resume task work' -p "$idle"
probe a-default "tp_switch's and the task work's" 'tp_switch \+ resume task work' -a
kill "$idle"
probe cmd-default "the sched_exit_tp program's and tp_switch's" 'tp_sched_exit \+ tp_switch' \
	-- sleep 0.5
WPROF_RESUME_WALK=exit probe a-exit "the sched_exit_tp program's and tp_switch's" \
	'tp_sched_exit \+ tp_switch' -a
export WPROF_RESUME_WALK=task_work
probe cmd-forced "tp_switch's and the task work's" 'tp_switch \+ resume task work' -- sleep 0.5

rerun_tests "with the resume task work" check_deferred disk_write mutex block_count sym_nanosleep
finish
