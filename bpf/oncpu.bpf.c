// SPDX-License-Identifier: GPL-2.0-only
/* On-CPU sampling: a cpu-clock perf event on every CPU counts stacks. */
#include "common.bpf.h"
#include "thread.bpf.h"
#include "unwind.bpf.h"

/* The user stack of a sample: from the interrupted registers when they are user mode. */
static __always_inline __u64 sample_user_stack(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/* the context allows only whole-word loads of the registers */
#define REG(name) ((__u64 *)&ctx->regs)[__builtin_offsetof(struct pt_regs, name) / 8]
	if ((REG(cs) & 3) == 3) /* user mode */
		return user_stack_regs(ctx, SCRATCH_SAMPLE, REG(ip), REG(sp), REG(bp));
#undef REG
#endif
	return user_stack(ctx, SCRATCH_SAMPLE);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, pid = pid_tgid >> 32;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ustack = 0, kstack = 0, steal = 0, now;
	struct wprof_thread *th;
	__u32 start_id;

	if (!is_target(pid, tid))
		return 0;
	stat_add(WPROF_STAT_SAMPLES, 1);
	if (user_stacks)
		ustack = sample_user_stack(ctx);
	if (kernel_stacks)
		kstack = kernel_stack(ctx, SCRATCH_SAMPLE, 0);
	start_id = task_start_id(task);
	now = bpf_ktime_get_ns();
	/* a sample only counts: user space shares the exact on-CPU time out by samples */
	account(pid, tid, start_id, ustack, kstack, WPROF_ON_CPU, now, 0, WPROF_WEIGHT_ONE);
	/* the steal that ended in this interrupt is this stack's, measured */
	th = steal_time ? thread_lookup(tid) : NULL;
	if (th)
		steal = steal_sample(th, task_steal_ns(task, true), bpf_get_smp_processor_id(),
				     now);
	if (steal)
		account(pid, tid, start_id, ustack, kstack, WPROF_STEAL, now, steal,
			WPROF_WEIGHT_ONE);
	return 0;
}
