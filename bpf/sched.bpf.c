// SPDX-License-Identifier: GPL-2.0-only
/*
 * Off-CPU time from scheduler events. At switch-out a target thread's stacks
 * and state are remembered in `threads`; its wakeup time splits the interval;
 * at switch-in the blocked part and the run-queue part are added to `counts`.
 *
 * Every program exists twice: tp_btf (typed arguments, cheapest) and raw_tp
 * (fallback for kernels that refuse tp_btf). User space turns one set off
 * with bpf_program__set_autoload() before load.
 */
#include "common.bpf.h"
#include "thread.bpf.h"
#include "unwind.bpf.h"

static __always_inline __u32 log2_slot(__u64 us)
{
	__u32 r = 0, shift;

	shift = (us > 0xffffffffULL) << 5;
	us >>= shift;
	r |= shift;
	shift = (us > 0xffff) << 4;
	us >>= shift;
	r |= shift;
	shift = (us > 0xff) << 3;
	us >>= shift;
	r |= shift;
	shift = (us > 0xf) << 2;
	us >>= shift;
	r |= shift;
	shift = (us > 0x3) << 1;
	us >>= shift;
	r |= shift;
	r |= us >> 1;
	return r < WPROF_HIST_SLOTS ? r : WPROF_HIST_SLOTS - 1;
}

static __always_inline void hist_add(__u32 pid, __u64 ns)
{
	struct wprof_hist_key key = { .pid = pid, .slot = log2_slot(ns / 1000) };
	__u64 zero = 0, *v;

	v = bpf_map_lookup_elem(&block_hist, &key);
	if (!v) {
		bpf_map_update_elem(&block_hist, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&block_hist, &key);
		if (!v) {
			stat_add(WPROF_STAT_HIST_FULL, 1);
			return;
		}
	}
	__sync_fetch_and_add(v, 1); /* the threads of a process share a bucket */
}

/*
 * Whether to walk an interval of `d` ns, and its weight: always when it is
 * at least walk_tau_ns long, else with probability d / walk_tau_ns, and then
 * it weighs walk_tau_ns / d. Each stack's expected total is its exact total;
 * the walks an interval costs are bounded by one per walk_tau_ns of
 * off-CPU time. 0: not walked.
 */
static __always_inline __u64 walk_weight(__u64 d)
{
	__u64 tau = walk_tau_ns;

	if (!tau || d >= tau) {
		stat_add(WPROF_STAT_IV_EXACT, 1);
		return WPROF_WEIGHT_ONE;
	}
	if (!d || ((__u64)bpf_get_prandom_u32() * tau) >> 32 >= d) {
		stat_add(WPROF_STAT_IV_SKIPPED, 1);
		return 0;
	}
	stat_add(WPROF_STAT_IV_SAMPLED, 1);
	return (tau << WPROF_WEIGHT_SHIFT) / d;
}

/*
 * Close the thread's off-CPU interval at `now`: a blocked interval is split
 * at its wakeup into the blocked part and the wait for a CPU after it. The
 * thread's own totals are exact; the stacks get what passes the filters, if
 * the interval is walked (walk_weight()). Only the window's part of it
 * counts (a block is one if its blocked part is in the window).
 * src/profile.c closes intervals still open at the window's end the same way.
 * `task`: the thread, stopped, whose kernel stack is the interval's (NULL:
 * it ran since, unseen).
 */
static __always_inline void close_interval(struct wprof_thread *th, __u64 now,
					   struct task_struct *task)
{
	__u64 start = th->off_since_ns, wake = th->wake_ns, split = now, ns, runq;
	__u32 state = th->off_state;
	struct wprof_interval iv = {};

	th->off_since_ns = 0;
	th->wake_ns = 0;
	if (state >= WPROF_STATE_CNT || !window_open())
		return;
	if (state == WPROF_OFF_RUNQ)
		split = start;
	else if (wake && wake >= start && wake <= now)
		split = wake;
	ns = span(start, split);
	if (ns) {
		th->off_ns[state] += ns;
		th->blocks++;
		if (ns > th->max_block_ns)
			th->max_block_ns = ns;
		hist_add(th->pid, ns);
		if (part_kept(ns))
			th->kept_ns[state] += ns;
	}
	runq = span(split, now);
	if (runq) {
		th->off_ns[WPROF_OFF_RUNQ] += runq;
		if (part_kept(runq))
			th->kept_ns[WPROF_OFF_RUNQ] += runq;
	}
	stat_add(WPROF_STAT_FILTERED, (ns && !part_kept(ns)) + (runq && !part_kept(runq)));
	if (!(ns && part_kept(ns)) && !(runq && part_kept(runq)))
		return;
	iv.weight = walk_weight(now - start);
	if (!iv.weight)
		return;
	iv.kstack_id = th->kstack_id;
	if (!(th->walk & WPROF_WALK_KERNEL)) {
		iv.kstack_id = 0;
		if (task && kernel_stacks)
			iv.kstack_id = task_kernel_stack(task, SCRATCH_SWITCH);
	}
	iv.state = state;
	iv.ns[0] = ns;
	iv.ns[1] = runq;
	if (!(th->walk & WPROF_WALK_DEFER)) {
		add_interval(th, &iv, th->ustack_id);
		return;
	}
	if (!task) { /* it ran since: the syscall it blocked in may be over */
		stat_add(WPROF_STAT_USER_LOST, 1);
		add_interval(th, &iv, 0);
		return;
	}
	/* walked at the syscall's exit, or its next switch-out, whichever first */
	if (th->pend.weight)
		drop_pending(th);
	th->pend.kstack_id = iv.kstack_id;
	th->pend.state = iv.state;
	th->pend.ns[0] = iv.ns[0];
	th->pend.ns[1] = iv.ns[1];
	__sync_lock_test_and_set(&th->pend.weight, iv.weight);
}

/* On-CPU time in the window. */
static __always_inline void add_on(struct wprof_thread *th, __u64 from, __u64 to)
{
	if (window_open())
		th->on_ns += span(from, to);
}

#define ENOSYS 38
#define USER_CS_64 0x33
#define TASK_STOPPED_TRACED 0x000c /* __TASK_STOPPED | __TASK_TRACED */

/*
 * Syscalls that change the caller's user registers or stack while in them,
 * or never return: their stacks are walked at switch-out, never deferred.
 */
static __always_inline bool keeps_user_stack(long nr)
{
	switch (nr) {
	case 15:  /* rt_sigreturn: restores the interrupted registers */
	case 56:  /* clone */
	case 58:  /* vfork: the child runs on the caller's stack meanwhile */
	case 59:  /* execve */
	case 60:  /* exit */
	case 231: /* exit_group */
	case 322: /* execveat */
	case 435: /* clone3 */
		return false;
	}
	return nr >= 0 && nr < 1024;
}

/*
 * Whether the current thread is provably inside a syscall's body, before the
 * syscall returns and before sys_exit: then its user registers and the user
 * stack they point to stay as they are until sys_exit, where on_sys_exit()
 * can walk them. The proof, from its saved user registers:
 * - it entered by the `syscall` instruction (the two bytes before the user
 *   ip are 0f 05; an exception or interrupt does not leave that), with a
 *   syscall number (orig_ax) that keeps the caller's stack, in 64-bit mode;
 * - no return value yet: the entry code sets ax to -ENOSYS, the syscall's
 *   return overwrites it. A return of -ENOSYS itself would fool this, so a
 *   thread whose last sys_exit returned -ENOSYS, or whose sys_exit was never
 *   seen, is not trusted (WPROF_WALK_SYS_*).
 */
static __always_inline bool in_syscall(struct wprof_thread *th)
{
	struct pt_regs *regs;
	__u16 insn = 0;

	if ((th->walk & (WPROF_WALK_SYS_SEEN | WPROF_WALK_SYS_ENOSYS)) != WPROF_WALK_SYS_SEEN)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs || BPF_CORE_READ(regs, ax) != (unsigned long)-ENOSYS ||
	    BPF_CORE_READ(regs, cs) != USER_CS_64 || !keeps_user_stack(BPF_CORE_READ(regs, orig_ax)))
		return false;
	if (bpf_probe_read_user(&insn, sizeof(insn), (void *)(BPF_CORE_READ(regs, ip) - 2)))
		return false;
	return insn == 0x050f;
}

/*
 * The user stack of the interval that starts: the one walked earlier in the
 * same syscall if any; left to later if the thread is in a syscall (walked
 * only if the interval is, at the syscall's exit); else walked now. The
 * kernel stack is walked when the thread gets a CPU again, if the interval
 * is walked. Returns the kind of switch (WPROF_STAT_SW_*).
 */
static __always_inline __u32 switch_stacks(void *ctx, struct wprof_thread *th, bool typed,
					   unsigned int state)
{
	bool runnable = th->off_state == WPROF_OFF_RUNQ;
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 kind = runnable ? WPROF_STAT_SW_PREEMPT : WPROF_STAT_SW_WALKED;
	bool sys, walk, pend;

	th->walk &= WPROF_WALK_SYSCALL;
	th->ustack_id = 0;
	th->kstack_id = 0;
	if (!typed) {
		/* raw_tp: no task pointer to walk the kernel stack of at switch-in */
		th->kstack_id = kernel_stacks ? kernel_stack(ctx, SCRATCH_SWITCH, switch_kstack_skip) : 0;
		th->walk |= WPROF_WALK_KERNEL;
	}
	if (!user_stacks || (task->flags & (PF_KTHREAD | PF_USER_WORKER))) {
		th->walk |= WPROF_WALK_USER;
		return WPROF_STAT_SW_KTHREAD;
	}
	/*
	 * A pending interval proves the thread has not reached its syscall's
	 * sys_exit (which would have taken it): its user registers are still
	 * the syscall's. A stopped or traced thread's may be changed by its
	 * tracer: its stack is walked now.
	 */
	pend = th->pend.weight != 0;
	sys = pend || (walk_tau_ns && !(state & TASK_STOPPED_TRACED) && in_syscall(th));
	if (!sys)
		th->walk &= ~WPROF_WALK_SYS_USER;
	if (sys && !pend && !(th->walk & WPROF_WALK_SYS_USER)) {
		th->walk |= WPROF_WALK_DEFER;
		return WPROF_STAT_SW_DEFERRED;
	}
	/* one walk site: the verifier follows the unwinder once */
	walk = !sys || !(th->walk & WPROF_WALK_SYS_USER);
	if (walk)
		th->ustack_id = user_stack(ctx, SCRATCH_SWITCH);
	if (sys) {
		if (walk) {
			th->sys_ustack_id = th->ustack_id;
			th->walk |= WPROF_WALK_SYS_USER;
		} else {
			th->ustack_id = th->sys_ustack_id;
			kind = WPROF_STAT_SW_REUSED;
		}
		settle_pending(th, th->ustack_id, WPROF_STAT_USER_LATE);
	}
	th->walk |= WPROF_WALK_USER;
	return kind;
}

static __always_inline __u32 switch_out(void *ctx, struct task_struct *prev, bool preempt,
					unsigned int state, __u64 now, bool typed)
{
	__u32 tid = TASK_READ(prev, pid, typed), pid = TASK_READ(prev, tgid, typed);
	struct wprof_thread *th;

	th = thread_get(prev, pid, tid, now);
	if (!th)
		return WPROF_STAT_SW_WALKED;
	if (th->oncpu_since_ns) {
		add_on(th, th->oncpu_since_ns, now);
	} else if (!th->off_since_ns) { /* first seen going off: on since first seen */
		add_on(th, th->first_ns, now);
	} else {
		/*
		 * It got back on a CPU without a sched_switch event (seen on
		 * a 6.18 VM, tens of times in 4 s, always next to the same
		 * few threads of one process; the kernel's own trace event
		 * misses them too). The scheduler has just updated its
		 * runtime: what it ran since it was last picked tells when
		 * that was.
		 */
		__u64 ran = TASK_READ(prev, se.sum_exec_runtime, typed) -
			    TASK_READ(prev, se.prev_sum_exec_runtime, typed);
		__u64 in = ran < now - th->off_since_ns ? now - ran : th->off_since_ns;

		stat_add(WPROF_STAT_UNTRACED_IN, 1);
		close_interval(th, in, NULL);
		add_on(th, in, now);
	}
	th->oncpu_since_ns = 0;
	bpf_get_current_comm(th->comm, sizeof(th->comm));
	if (state & (TASK_DEAD | EXIT_ZOMBIE | EXIT_DEAD)) {
		th->exit_ns = now;
		th->off_since_ns = 0;
		drop_pending(th);
		return WPROF_STAT_SW_KTHREAD;
	}
	stat_add(WPROF_STAT_SWITCHES, 1);
	th->off_state = off_state(preempt, state);
	th->off_since_ns = now;
	th->wake_ns = 0;
	th->waker_ustack_id = 0;
	th->waker_kstack_id = 0;
	return switch_stacks(ctx, th, typed, state);
}

static __always_inline void switch_in(struct task_struct *next, __u64 now, bool typed)
{
	__u32 tid = TASK_READ(next, pid, typed), pid = TASK_READ(next, tgid, typed);
	struct wprof_thread *th;

	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th) {
		th = thread_get(next, pid, tid, now);
		if (!th)
			return;
		/*
		 * Not seen since the window opened and coming onto a CPU
		 * without a wakeup (on_wakeup() would have made its entry):
		 * it was runnable since then, waiting for a CPU (the start
		 * snapshot had not reached it). Its kernel stack is still the
		 * one it left the CPU with; its user stack is not known.
		 */
		if (th->first_ns < now) {
			th->off_since_ns = th->first_ns;
			th->off_state = WPROF_OFF_RUNQ;
			th->walk = WPROF_WALK_USER | WPROF_WALK_KERNEL;
			if (typed && kernel_stacks)
				th->kstack_id = task_kernel_stack(next, SCRATCH_SWITCH);
		}
	}
	/*
	 * A __schedule() can pick a thread that left its last CPU after that
	 * __schedule() started (newidle balancing pulls it over): it got on
	 * no earlier than that. Its wakeup can be seen after that start too
	 * (sched_wakeup fires after the reschedule IPI): that wakeup is not
	 * used, close_interval() counts no run-queue time then.
	 */
	if (now < th->off_since_ns)
		now = th->off_since_ns;
	if (th->off_since_ns) {
		close_interval(th, now, typed ? next : NULL);
	} else if (th->oncpu_since_ns) {
		/* it left a CPU unseen: count it as on until now, and say so */
		stat_add(WPROF_STAT_UNTRACED_OUT, 1);
		add_on(th, th->oncpu_since_ns, now);
	}
	th->oncpu_since_ns = now;
}

/*
 * When a switch happens: when __schedule() starts. The scheduler ends prev's
 * run and starts next's there (it reads its clock then), and so does wprof.
 * The time our sched_switch program runs is later by what ran before it on
 * the tracepoint, and unevenly so: another profiler attached earlier walks
 * the stacks of its own targets as they leave the CPU, so a thread that
 * comes on after one of them is seen several microseconds late, and one
 * that leaves before one of them is not. That moved 3 us of every run of
 * such a thread from on-CPU to run-queue time (-11% on-CPU at 30 us runs).
 * sched_entry_tp (6.16+), the first thing __schedule() does, stamps the
 * time on its CPU; the sched_switch of the same call reads it: __schedule()
 * does not nest, and every call fires sched_entry_tp before sched_switch.
 * Where there is no stamp (older kernels; a CPU that has not entered
 * __schedule() since the program was attached) the switch is timed here.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sched_entry_ns SEC(".maps");

static __always_inline __u64 switch_time(void)
{
	__u64 now = bpf_ktime_get_ns(), *entry;
	__u32 zero = 0;

	entry = bpf_map_lookup_elem(&sched_entry_ns, &zero);
	if (entry && *entry && *entry <= now)
		return *entry;
	return now;
}

/* `typed`: prev and next are BTF pointers (tp_btf), usable with task helpers */
static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state, bool typed)
{
	bool out = is_target(TASK_READ(prev, tgid, typed), TASK_READ(prev, pid, typed));
	bool in = is_target(TASK_READ(next, tgid, typed), TASK_READ(next, pid, typed));
	__u64 now, t0 = 0, t1 = 0;
	__u32 kind = WPROF_STAT_SW_OTHER;

	if (time_kinds)
		t0 = bpf_ktime_get_ns();
	/* most switches on a machine concern no target: no clock read for them */
	if (!out && !in) {
		stat_add(WPROF_STAT_SW_OTHER, 1);
		if (time_kinds)
			stat_add(WPROF_STAT_NS_OTHER, bpf_ktime_get_ns() - t0);
		return 0;
	}
	now = switch_time();
	if (out) {
		kind = switch_out(ctx, prev, preempt, prev_state, now, typed);
		stat_add(kind, 1);
	}
	if (time_kinds) {
		t1 = bpf_ktime_get_ns();
		if (out)
			stat_add(kind - WPROF_STAT_SW_OTHER + WPROF_STAT_NS_OTHER, t1 - t0);
	}
	if (in) {
		switch_in(next, now, typed);
		stat_add(WPROF_STAT_SW_IN, 1);
		if (time_kinds)
			stat_add(WPROF_STAT_NS_IN, bpf_ktime_get_ns() - t1);
	}
	return 0;
}

static __always_inline int on_wakeup(void *ctx, struct task_struct *p, bool typed)
{
	__u32 tid = TASK_READ(p, pid, typed), pid = TASK_READ(p, tgid, typed);
	struct wprof_thread *th;

	if (!is_target(pid, tid))
		return 0;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th) {
		__u64 now = bpf_ktime_get_ns();

		/*
		 * Not seen since the window opened, and woken: it was blocked
		 * since then (the start snapshot had not reached it), in the
		 * kernel stack it still has. Interruptibly, most likely: its
		 * state is already TASK_RUNNING here.
		 */
		th = thread_get(p, pid, tid, now);
		if (!th)
			return 0;
		if (th->first_ns < now && !th->off_since_ns && !th->oncpu_since_ns) {
			th->off_since_ns = th->first_ns;
			th->off_state = WPROF_OFF_SLEEP;
			th->walk = WPROF_WALK_USER | WPROF_WALK_KERNEL;
			if (typed && kernel_stacks)
				th->kstack_id = task_kernel_stack(p, SCRATCH_WAKE);
		}
	}
	if (!th->off_since_ns || th->wake_ns)
		return 0;
	stat_add(WPROF_STAT_WAKEUPS, 1);
	th->wake_ns = bpf_ktime_get_ns();
	if (record_wakers) {
		/* the waker is the current task (or what an interrupt landed on) */
		th->waker_ustack_id = user_stacks ? user_stack(ctx, SCRATCH_WAKE) : 0;
		th->waker_kstack_id = kernel_stacks ? kernel_stack(ctx, SCRATCH_WAKE, 0) : 0;
		bpf_get_current_comm(th->waker_comm, sizeof(th->waker_comm));
		th->waker_pid = bpf_get_current_pid_tgid() >> 32;
	}
	return 0;
}

/* A new thread waits for its first CPU: run-queue time, with no stack yet. */
static __always_inline int on_wakeup_new(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), pid = BPF_CORE_READ(p, tgid);
	__u64 now = bpf_ktime_get_ns();
	struct wprof_thread *th;

	if (!is_target(pid, tid))
		return 0;
	th = thread_get(p, pid, tid, now);
	if (!th)
		return 0;
	th->first_ns = now;
	th->off_since_ns = now;
	th->off_state = WPROF_OFF_RUNQ;
	th->ustack_id = 0;
	th->kstack_id = 0;
	th->walk = WPROF_WALK_USER | WPROF_WALK_KERNEL;
	BPF_CORE_READ_STR_INTO(&th->comm, p, comm);
	return 0;
}

/*
 * A forked process maps what its parent maps: its walks can use the parent's
 * maps at once, until user space reads its own.
 */
static __always_inline void inherit_maps(__u32 ppid, __u32 cpid, __u64 start)
{
	struct wprof_proc_maps *pm = bpf_map_lookup_elem(&proc_maps, &ppid);

	if (!pm || bpf_map_update_elem(&proc_maps, &cpid, pm, BPF_ANY))
		return;
	pm = bpf_map_lookup_elem(&proc_maps, &cpid);
	if (pm) {
		pm->start_ticks = start;
		pm->asked_ns = 0;
	}
}

/* An exec replaces every mapping: the process's maps are void from now on. */
static __always_inline void forget_maps(__u32 pid)
{
	struct wprof_proc_maps *pm = bpf_map_lookup_elem(&proc_maps, &pid);

	if (pm) {
		pm->nr = 0;
		pm->asked_ns = 0;
	}
}

/*
 * With `-- CMD`, processes the command forks are targets too. Any new target
 * process is reported, to have its mappings captured while it lives.
 */
static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), cpid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (ppid == cpid) /* a thread */
		return 0;
	if (follow_children && filter_mode == WPROF_FILTER_PID &&
	    bpf_map_lookup_elem(&targets, &ppid))
		bpf_map_update_elem(&targets, &cpid, &one, BPF_ANY);
	if (!is_target(cpid, cpid))
		return 0;
	inherit_maps(ppid, cpid, start_ticks(child));
	notify(cpid, WPROF_EV_FORK);
	return 0;
}

/* CMD's first instruction: its recording starts here, not at fork. */
static __always_inline int on_exec(struct task_struct *p, bool typed)
{
	__u32 tid = TASK_READ(p, pid, typed), pid = TASK_READ(p, tgid, typed);
	__u64 now = bpf_ktime_get_ns();
	struct wprof_thread *th;

	forget_maps(pid);
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th) {
		/* the registers are the new program's: the old call's stack is gone */
		drop_pending(th);
		th->walk &= ~WPROF_WALK_SYS_USER;
	}
	if (exec_gate_tgid && pid == exec_gate_tgid) {
		exec_gate_tgid = 0;
	} else {
		if (is_target(pid, tid))
			notify(pid, WPROF_EV_EXEC);
		return 0;
	}
	notify(pid, WPROF_EV_EXEC);
	th = thread_get(p, pid, tid, now);
	if (th) {
		th->first_ns = now;
		th->oncpu_since_ns = now;
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tp_exec, struct task_struct *p)
{
	return on_exec(p, true);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(raw_exec, struct task_struct *p)
{
	return on_exec(p, false);
}

/*
 * A syscall's exit: the user stack of a walked interval of its body is
 * walked here, in the thread's context, before any user code runs again.
 */
static __always_inline void on_sys_exit(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct wprof_thread *th;

	if (!is_target(id >> 32, tid))
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th && ret == -ENOSYS) /* remembered, so that its exit path is not taken for a body */
		th = thread_get(bpf_get_current_task_btf(), id >> 32, tid, bpf_ktime_get_ns());
	if (!th)
		return;
	if (th->pend.weight) {
		if (!(th->walk & WPROF_WALK_SYS_USER))
			th->sys_ustack_id = user_stack(ctx, SCRATCH_SYSCALL);
		settle_pending(th, th->sys_ustack_id, WPROF_STAT_USER_LATE);
	}
	th->walk = (th->walk & ~(WPROF_WALK_SYS_USER | WPROF_WALK_SYS_ENOSYS)) |
		   WPROF_WALK_SYS_SEEN | (ret == -ENOSYS ? WPROF_WALK_SYS_ENOSYS : 0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(tp_sys_exit, struct pt_regs *regs, long ret)
{
	on_sys_exit(ctx, ret);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(raw_sys_exit, struct pt_regs *regs, long ret)
{
	on_sys_exit(ctx, ret);
	return 0;
}

/* No argument is read: kernels differ in them ((preempt, ip) at first, then (preempt)). */
SEC("tp_btf/sched_entry_tp")
int BPF_PROG(tp_sched_entry)
{
	__u32 zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&sched_entry_ns, &zero);

	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tp_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state, true);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tp_wakeup, struct task_struct *p)
{
	return on_wakeup(ctx, p, true);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tp_wakeup_new, struct task_struct *p)
{
	return on_wakeup_new(p);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tp_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child);
}

/* Before 5.18 the tracepoint had no prev_state argument: read the task's. */
SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, task_state(prev), false);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_wakeup, struct task_struct *p)
{
	return on_wakeup(ctx, p, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p)
{
	return on_wakeup_new(p);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(raw_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child);
}

char LICENSE[] SEC("license") = "GPL";
