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

/*
 * The stacks a thread leaves the CPU with, walked at every switch-out: a
 * stack kept from an earlier switch could only be reused if the thread
 * provably had not run user code since, and nothing tells that for certain.
 */
static __always_inline void switch_stacks(void *ctx, struct wprof_thread *th)
{
	th->ustack_id = user_stacks ? user_stack(ctx, SCRATCH_SWITCH) : 0;
	th->kstack_id = kernel_stacks ? kernel_stack(ctx, SCRATCH_SWITCH, switch_kstack_skip) : 0;
}

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

/* One part of an interval, added to the stacks if it passes the filters. */
static __always_inline void add_part(struct wprof_thread *th, __u32 state, __u64 ns, bool waker)
{
	if (ns < min_block_ns || ns > max_block_ns) {
		stat_add(WPROF_STAT_FILTERED, 1);
		return;
	}
	/* a blocked part with a known waker goes to `wakes` instead */
	if (!waker || !record_wakers || !(th->waker_ustack_id | th->waker_kstack_id)) {
		account(th->pid, th->tid, th->ustack_id, th->kstack_id, state, ns);
	} else {
		struct wprof_wake_key key = {
			.blocked = {
				.pid = th->pid,
				.tid = th->tid,
				.ustack_id = th->ustack_id,
				.kstack_id = th->kstack_id,
				.state = state,
			},
			.waker_ustack_id = th->waker_ustack_id,
			.waker_kstack_id = th->waker_kstack_id,
			.waker_pid = th->waker_pid,
		};

		__builtin_memcpy(key.waker_comm, th->waker_comm, sizeof(key.waker_comm));
		add_val(&wakes, &key, ns, WPROF_STAT_WAKES_FULL);
	}
}

/*
 * Close the thread's off-CPU interval at `now`: a blocked interval is split
 * at its wakeup into the blocked part and the wait for a CPU after it. The
 * thread's own totals are exact; the stacks get what passes the filters.
 * Only the window's part of it counts (a block is one if its blocked part
 * is in the window). src/profile.c closes intervals still open at the
 * window's end the same way.
 */
static __always_inline void close_interval(struct wprof_thread *th, __u64 now)
{
	__u64 start = th->off_since_ns, wake = th->wake_ns, split = now, ns;
	__u32 state = th->off_state;

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
		add_part(th, state, ns, true);
	}
	ns = span(split, now);
	if (ns) {
		th->off_ns[WPROF_OFF_RUNQ] += ns;
		add_part(th, WPROF_OFF_RUNQ, ns, false);
	}
}

/* On-CPU time in the window. */
static __always_inline void add_on(struct wprof_thread *th, __u64 from, __u64 to)
{
	if (window_open())
		th->on_ns += span(from, to);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int state, __u64 now, bool typed)
{
	__u32 tid = TASK_READ(prev, pid, typed), pid = TASK_READ(prev, tgid, typed);
	struct wprof_thread *th;

	th = thread_get(prev, pid, tid, now);
	if (!th)
		return;
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
		close_interval(th, in);
		add_on(th, in, now);
	}
	th->oncpu_since_ns = 0;
	bpf_get_current_comm(th->comm, sizeof(th->comm));
	if (state & (TASK_DEAD | EXIT_ZOMBIE | EXIT_DEAD)) {
		th->exit_ns = now;
		th->off_since_ns = 0;
		return;
	}
	stat_add(WPROF_STAT_SWITCHES, 1);
	th->off_state = off_state(preempt, state);
	th->off_since_ns = now;
	th->wake_ns = 0;
	th->waker_ustack_id = 0;
	th->waker_kstack_id = 0;
	switch_stacks(ctx, th);
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
		 * one it left the CPU with.
		 */
		if (th->first_ns < now) {
			th->off_since_ns = th->first_ns;
			th->off_state = WPROF_OFF_RUNQ;
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
		close_interval(th, now);
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
	__u64 now;

	/* most switches on a machine concern no target: no clock read for them */
	if (!out && !in)
		return 0;
	now = switch_time();
	if (out)
		switch_out(ctx, prev, preempt, prev_state, now, typed);
	if (in)
		switch_in(next, now, typed);
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
