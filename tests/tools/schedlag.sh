#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# schedlag.sh TID [SECONDS]: where the kernel's schedstat of thread TID and
# the sched_switch / sched_wakeup tracepoints (what wprof times) part ways;
# the evidence behind the checks of tests/tools/schedcmp.py. Needs bpftrace
# (Debian package bpftrace; scripts/install-deps.sh --bench installs it)
# and root. Prints three lines:
#
# 1. The scheduler clock's lag at switch-in. At each switch-out of TID that
#    blocks, the scheduler has just updated its clock and the thread's
#    se.exec_start from it: the tracepoint's time less se.exec_start there
#    is the offset between the two clocks. At each switch-in, se.exec_start was set when
#    the thread was picked: the tracepoint's time less it, less that
#    offset, is how far the clock lagged the switch.
# 2. The kernel's run lengths (sum_exec_runtime - prev_sum_exec_runtime at
#    each switch-out) against the runs timed at sched_switch. When the
#    excess equals line 1's lag, schedstat's on-CPU time holds the lag and
#    its run delay (which ends at the same clock) lacks it.
# 3. Between the first and the last switch-out of TID, the kernel's on-CPU
#    time + run delay against the tracepoints' (runs, plus waits from a
#    wakeup or a preemption to the next switch-in), and how many switch-ins
#    followed a sleep that no sched_waking or sched_wakeup event ended.
set -u
tid=${1:?usage: schedlag.sh TID [SECONDS]}
secs=${2:-3}
command -v bpftrace >/dev/null || { echo "schedlag: needs bpftrace" >&2; exit 2; }

# The switch-out probe comes first: bpftrace types a map by its first use.
bpftrace -e "
tracepoint:sched:sched_waking /args->pid == $tid/ { if (@asleep) { @waking = 1; } }
tracepoint:sched:sched_wakeup /args->pid == $tid/ {
	if (@asleep) { @ready = nsecs; @asleep = 0; @waking = 0; }
}
tracepoint:sched:sched_switch /args->prev_pid == $tid/ {
	if (@task && @in) {
		@kernel_ns += curtask->se.sum_exec_runtime - curtask->se.prev_sum_exec_runtime;
		@on_ns += nsecs - @in;
		@on1 = curtask->se.sum_exec_runtime; @rd1 = curtask->sched_info.run_delay;
		@in = 0;
	} else if (!@task) {
		@on0 = curtask->se.sum_exec_runtime; @rd0 = curtask->sched_info.run_delay;
	}
	@task = (uint64)curtask;
	/* a thread that blocks calls schedule() itself: the clock is fresh */
	if (args->prev_state != 0) { @off = (int64)(nsecs - curtask->se.exec_start); }
	if (args->prev_state == 0) { @ready = nsecs; } else { @asleep = 1; @ready = 0; @waking = 0; }
}
tracepoint:sched:sched_switch /args->next_pid == $tid && @task/ {
	\$t = (struct task_struct *)@task;
	@lag_ns += (int64)(nsecs - \$t->se.exec_start) - @off;
	@ins++;
	@in = nsecs;
	if (@ready) {
		@rq_ns += nsecs - @ready; @ready = 0;
	} else if (@asleep) {
		@unwoken++; @asleep = 0;
		if (@waking) { @waking_only++; }
	}
}
interval:s:$secs { exit(); }
END {
	printf(\"1. %d switch-ins: the scheduler's clock lagged them by %d us in all (%d ns each)\\n\",
	       @ins, @lag_ns / 1000, @ins ? @lag_ns / @ins : 0);
	printf(\"2. runs: %d us by the kernel's own lengths, %d us timed at sched_switch: %d us more\\n\",
	       @kernel_ns / 1000, @on_ns / 1000, (@kernel_ns - @on_ns) / 1000);
	printf(\"3. on-CPU + run delay: kernel %d us, tracepoints %d us; %d switch-ins after a sleep no wakeup event ended (%d with only sched_waking)\\n\",
	       (@on1 - @on0 + @rd1 - @rd0) / 1000, (@on_ns + @rq_ns) / 1000, @unwoken, @waking_only);
	clear(@waking); clear(@ready); clear(@asleep); clear(@task); clear(@off); clear(@in);
	clear(@kernel_ns); clear(@on_ns); clear(@rq_ns); clear(@on0); clear(@rd0); clear(@on1);
	clear(@rd1); clear(@lag_ns); clear(@ins); clear(@unwoken); clear(@waking_only);
}" 2> >(grep -vE 'WARNING|RLIMIT|^ *~|^stdin|^ +[^ ]' >&2) | grep -v '^$'
