// SPDX-License-Identifier: GPL-2.0-only
/*
 * The window's start edge. Run once by user space right after the scheduler
 * programs are attached: every target thread that has no entry yet has not
 * switched since, so it has been in its current state since the window
 * started. An off-CPU thread gets an open interval from the window start with
 * the stacks it blocked in, which it left the CPU with before we attached:
 * the kernel stack from bpf_get_task_stack(), the user stack by walking the
 * CFI walk of unwind.bpf.h from its saved user registers. Sleepable, because
 * reading another task's user memory may fault pages in.
 */
#include "common.bpf.h"
#include "thread.bpf.h"
#include "unwind.bpf.h"

static __always_inline __u64 task_user_stack(struct task_struct *task)
{
	struct wprof_stack *st = scratch_stack(SCRATCH_ITER);
	struct pt_regs *regs;
	__u64 fp, frame[2];
	__u32 nr = 0;

	if (!st || !task->mm || (task->flags & PF_KTHREAD))
		return 0; /* kernel thread, or exiting */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	if (WPROF_CFI_UNWIND && cfi_walk) {
		py_read(st, task, true, SCRATCH_ITER); /* then the native frames after them */
		cfi_unwind(task, PT_REGS_IP_CORE(regs), PT_REGS_SP_CORE(regs),
			   PT_REGS_FP_CORE(regs), st, true, SCRATCH_ITER);
		return store_stack(st, true);
	}
	st->ips[nr++] = PT_REGS_IP_CORE(regs);
	fp = PT_REGS_FP_CORE(regs);
	for (int i = 1; i < WPROF_MAX_STACK_DEPTH; i++) {
		/* frame[0]: caller's frame pointer, frame[1]: return address */
		if (!fp || bpf_copy_from_user_task(frame, sizeof(frame), (void *)fp, task, 0))
			break;
		if (!frame[1])
			break;
		if (nr < WPROF_MAX_STACK_DEPTH)
			st->ips[nr++] = frame[1];
		/* stacks grow down: a caller's frame is above; anything else is junk */
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	st->nr = nr;
	return store_stack(st, true);
}

SEC("iter.s/task")
int snapshot_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct wprof_thread *th;
	unsigned int state;
	__u32 tid, pid;

	if (!task)
		return 0;
	tid = task->pid;
	pid = task->tgid;
	if (!is_target(pid, tid) || thread_lookup(tid))
		return 0;
	state = task_state(task);
	if (state & (TASK_DEAD | EXIT_ZOMBIE | EXIT_DEAD))
		return 0;
	th = thread_blank(NEW_ITER);
	if (!th)
		return 0;
	th->pid = pid;
	th->tid = tid;
	th->first_ns = clip(task->start_time);
	th->start_id = task->start_time;
	BPF_CORE_READ_STR_INTO(&th->comm, task, comm);
	if (task->on_cpu) {
		th->oncpu_since_ns = th->first_ns;
		th->exec_in = task->se.sum_exec_runtime;
		steal_begin(th, task_steal_ns(task, true), task_rq_of(task, true)->cpu);
	} else {
		th->off_since_ns = th->first_ns;
		th->off_state = off_state(false, state);
		th->run_delay_out = task->sched_info.run_delay;
		throttle_out(th, task, th->off_state == WPROF_OFF_RUNQ, true);
		th->walk = WPROF_WALK_USER | WPROF_WALK_KERNEL;
		if (user_stacks)
			th->ustack_id = task_user_stack(task);
		if (kernel_stacks)
			th->kstack_id = task_kernel_stack(task, SCRATCH_ITER);
	}
	/*
	 * Sleepable, this program can be preempted with a slot's lock held:
	 * a program that spins on it meanwhile has that event unrecorded,
	 * counted (a few instructions, once per thread, at the start)
	 */
	thread_commit(tid, NEW_ITER, 0); /* a failure is counted there */
	return 0;
}

/*
 * When the thread of @th, task `task`, off-CPU at the window's end, was
 * woken, if it has been since it left the CPU (as switch_wake() in
 * bpf/sched.bpf.c tells it at a switch-in): the clocks' offset is its CPU's.
 */
static __always_inline __u64 end_wake(struct wprof_thread *th, struct task_struct *task)
{
	__u32 zero = 0, cpu = task_rq_of(task, true)->cpu;

	if (th->off_state == WPROF_OFF_RUNQ) {
		throttle_in(th, task, bpf_ktime_get_ns(), true);
		return th->off_state == WPROF_OFF_THROTTLED ? th->wake_ns : 0;
	}
	return queued_since(th, task, bpf_map_lookup_percpu_elem(&clock_cal, &zero, cpu),
			    bpf_ktime_get_ns(), true);
}

/*
 * The window's end, run by user space after it closes and before anything is
 * detached. An interval still open has had none of its stacks walked that
 * were left to its end (the kernel stack, and the user stack left to its resume):
 * walk them now, into end_* fields tagged with the interval's start, which
 * user space uses only if the interval is still the open one once every
 * program is detached (the thread did not run during the walk). A pending
 * interval (the thread has just got a CPU and is still in __schedule()) is
 * taken here if its resume has not taken it meanwhile.
 */
SEC("iter.s/task")
int snapshot_end(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct wprof_thread *th;
	__u64 gen, kstack, ustack, pend;
	__u32 tid;

	if (!task)
		return 0;
	tid = task->pid;
	if (!is_target(task->tgid, tid))
		return 0;
	th = thread_lookup(tid);
	if (!th)
		return 0;
	if (!th->exit_ns) /* the name it has now (pthread_setname_np() since) */
		bpf_probe_read_kernel_str(th->comm, sizeof(th->comm), task->comm);
	pend = th->pend.start;
	if (pend) /* walked while the interval was pending: the thread had not resumed */
		settle_pending(th, pend, user_stacks ? task_user_stack(task) : 0,
			       WPROF_STAT_USER_LATE);
	/*
	 * A run still going: its steal up to now (the window's part of it).
	 * Not one whose switch-out went unseen: the task is off the CPU.
	 */
	if (th->oncpu_since_ns && !th->exit_ns && task->on_cpu)
		steal_end(th, task_steal_ns(task, true), task_rq_of(task, true)->cpu,
			  th->oncpu_since_ns, window_end_ns);
	gen = th->off_since_ns;
	if (!gen || th->exit_ns)
		return 0;
	if (runq_sched_info)
		th->wake_ns = end_wake(th, task);
	ustack = th->ustack_id;
	if (user_stacks && (th->walk & WPROF_WALK_DEFER))
		ustack = task_user_stack(task);
	kstack = th->kstack_id;
	if (kernel_stacks && !(th->walk & WPROF_WALK_KERNEL))
		kstack = task_kernel_stack(task, SCRATCH_ITER);
	th->end_ustack_id = ustack;
	th->end_kstack_id = kstack;
	th->end_gen = gen;
	return 0;
}
