// SPDX-License-Identifier: GPL-2.0-only
/* On-CPU sampling: a cpu-clock perf event on every CPU counts stacks. */
#include "common.bpf.h"

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, pid = pid_tgid >> 32;
	__u64 ustack = 0, kstack = 0;

	if (!is_target(pid, tid))
		return 0;
	stat_add(WPROF_STAT_SAMPLES, 1);
	if (user_stacks)
		ustack = capture_stack(ctx, SCRATCH_SAMPLE, true, 0);
	if (kernel_stacks)
		kstack = capture_stack(ctx, SCRATCH_SAMPLE, false, 0);
	/* the weight of a sample (its period) is applied in user space */
	account(pid, tid, ustack, kstack, WPROF_ON_CPU, 0);
	return 0;
}


