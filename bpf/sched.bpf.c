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
#include "ran.bpf.h"

/*
 * Random draws made at switches: a per-CPU xorshift64 stream each, not a
 * helper call (one is made at nearly every switch). One stream picks the
 * switches --stats times, one the short intervals walked, one the switches
 * that read the clock (switch_time()): no choice says anything of another.
 * A stream is seeded by the kernel's generator on its first draw on a CPU.
 * Only programs that run with interrupts or preemption off draw, and no
 * interrupt's program does: no draw is cut in two.
 */
enum { DRAW_TIMING, DRAW_WALK, DRAW_CLOCK, DRAW_CNT };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DRAW_CNT);
	__type(key, __u32);
	__type(value, __u64);
} draws SEC(".maps");

static __always_inline __u64 draw(__u32 stream)
{
	__u64 *state = bpf_map_lookup_elem(&draws, &stream), x;

	if (!state)
		return (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32();
	x = *state;
	if (!x)
		x = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32() | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
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

	/* a long block is sent with its stacks (send_long_block()): always walked */
	if (!tau || d >= tau || (long_block_ns && d >= long_block_ns)) {
		stat_add(WPROF_STAT_IV_EXACT, 1);
		return WPROF_WEIGHT_ONE;
	}
	if (!d || ((draw(DRAW_WALK) >> 32) * tau) >> 32 >= d) {
		stat_add(WPROF_STAT_IV_SKIPPED, 1);
		return 0;
	}
	stat_add(WPROF_STAT_IV_SAMPLED, 1);
	return (tau << WPROF_WEIGHT_SHIFT) / d;
}

/*
 * The target thread a CPU switched to (its tid, and RESUME_WALK if its user
 * stack is to be walked as it resumes): set by the sched_switch that picked
 * it, read by the sched_exit_tp that follows on that CPU, in the thread's
 * context (tp_sched_exit()). Every __schedule() that switches fires both,
 * with the CPU's preemption off in between; a new thread's first run fires
 * sched_exit_tp from schedule_tail().
 */
#define RESUME_WALK (1ULL << 32)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} resume_tid SEC(".maps");

static __always_inline void resume_expect(__u32 tid, bool walk)
{
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&resume_tid, &zero);

	if (slot)
		*slot = tid | (walk ? RESUME_WALK : 0);
}

/*
 * The resume walk as a BPF task work (6.18+): scheduled by the switch-in of
 * a walked interval whose user stack is left to its resume, for that thread,
 * it runs in the thread's own context as it next leaves the kernel for user
 * mode, before any user code. Its user registers and stack are then still the
 * ones it left the CPU with (stack_holds()), however many times it blocked
 * and ran in the kernel meanwhile. Only walked intervals pay for it, where a
 * program on sched_exit_tp runs at every switch.
 *
 * The kernel adds the work to the thread from an irq_work raised on this CPU
 * (interrupts are off here), which runs as soon as they are on again: as the
 * thread finishes its switch-in, before it can leave the kernel. Should the
 * thread still reach user mode first, its registers tell: the work compares
 * them with the ones saved here and drops the interval's user stack
 * (counted: resume_missed) rather than walk another one.
 */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym __weak;
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

struct resume_work {
	struct bpf_task_work tw;
	__u64 ip, sp; /* the thread's user registers as the interval closed */
};

/*
 * By tid; sized like `thread_slots` by user space. resume_task_work is set only
 * where the kernel has the kfunc: elsewhere its calls are dead code.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct resume_work);
} resume_works SEC(".maps");

/* Python frames, then the CFI walk (the only one where this program runs), from @regs. */
static __always_inline __u64 resume_user_stack(struct pt_regs *regs)
{
	struct wprof_stack *st = scratch_stack(SCRATCH_RESUME);

	if (!st)
		return 0;
	st->nr = 0;
	py_read_current(SCRATCH_RESUME);
	return cfi_user_stack(SCRATCH_RESUME, regs->ip, regs->sp, regs->bp);
}

/*
 * The thread's pending interval gets `ustack`, walked as it resumed (by the
 * resume task work or at sched_exit_tp), timed from `t0` with --stats.
 */
static __always_inline void settle_resumed(struct wprof_thread *th, __u64 ustack, __u64 t0)
{
	if (check_deferred) {
		stat_add(WPROF_STAT_CHECKED, 1);
		if (ustack != th->ustack_id)
			stat_add(WPROF_STAT_CHECK_DIFFERED, 1);
	}
	settle_pending(th, 0, ustack, WPROF_STAT_USER_LATE);
	stat_add(WPROF_STAT_SW_RESUMED, 1);
	if (time_kinds) { /* every one */
		stat_add(WPROF_STAT_NS_RESUMED, bpf_ktime_get_ns() - t0);
		stat_add(WPROF_STAT_TM_RESUMED, 1);
	}
}

static int resume_work_run(struct bpf_map *map, __u32 *key, struct resume_work *w)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wprof_thread *th;
	struct pt_regs *regs;
	__u64 t0 = 0, ustack;
	__u32 tid;

	if (!key || !w)
		return 0;
	tid = *key;
	th = thread_lookup(tid);
	if (!th || !th->pend.start || task->pid != tid)
		return 0;
	/* per-CPU scratch and counters: nothing else may run on this CPU meanwhile */
	bpf_preempt_disable();
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || regs->ip != w->ip || regs->sp != w->sp) {
		stat_add(WPROF_STAT_RESUME_MISSED, 1);
		drop_pending(th);
		bpf_preempt_enable();
		return 0;
	}
	if (time_kinds)
		t0 = bpf_ktime_get_ns();
	ustack = task->mm ? resume_user_stack(regs) : 0;
	settle_resumed(th, ustack, t0);
	bpf_preempt_enable();
	return 0;
}

/* Have the thread `task` walk its pending interval's user stack as it leaves the kernel. */
static __always_inline void resume_work_schedule(struct wprof_thread *th, struct task_struct *task)
{
	struct resume_work *w, blank = {};
	__u32 tid = th->tid;
	struct pt_regs *regs;
	long err;

	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	w = bpf_map_lookup_elem(&resume_works, &tid);
	if (!w) {
		bpf_map_update_elem(&resume_works, &tid, &blank, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&resume_works, &tid);
	}
	if (!w || !regs) {
		stat_add(WPROF_STAT_RESUME_MISSED, 1);
		drop_pending(th);
		return;
	}
	w->ip = regs->ip;
	w->sp = regs->sp;
	err = bpf_task_work_schedule_resume_impl(task, &w->tw, &resume_works,
						 (bpf_task_work_callback_t)resume_work_run, NULL);
	/* -EBUSY: scheduled already, not run yet: it will walk this one */
	if (err && err != -16) {
		stat_add(WPROF_STAT_RESUME_MISSED, 1);
		drop_pending(th);
	}
}

/*
 * Whether the user registers of `task`, current and in the kernel, are still
 * the ones its pending interval closed with (saved by resume_work_schedule()).
 */
static __always_inline bool resume_regs_hold(struct wprof_thread *th, struct task_struct *task)
{
	__u32 tid = th->tid;
	struct resume_work *w = bpf_map_lookup_elem(&resume_works, &tid);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (w && regs && regs->ip == w->ip && regs->sp == w->sp)
		return true;
	stat_add(WPROF_STAT_RESUME_MISSED, 1);
	return false;
}

/*
 * When the thread of @th, back on a CPU since `in` with no sched_switch seen
 * for it, was woken: from its wakeup event if one was seen (and the wait is
 * not the scheduler's count), else from the scheduler's count of its wait
 * for a CPU since it left one, `delay` (run_delay has it whole: the thread
 * got the CPU since). 0: not known.
 */
static __always_inline __u64 unseen_wake(const struct wprof_thread *th, __u64 in, __u64 delay)
{
	if (th->wake_ns && !runq_sched_info)
		return th->wake_ns;
	if (th->off_state != WPROF_OFF_RUNQ && delay < in - th->off_since_ns)
		return in - delay;
	return 0;
}

/*
 * When the thread of @th, task `next`, that gets the CPU at `now` was woken:
 * as the scheduler tells it (queued_since()), where runq_sched_info; else the
 * time of its wakeup event (0 if none seen).
 */
static __always_inline __u64 switch_wake(struct wprof_thread *th, struct task_struct *next,
					 __u64 now, bool typed)
{
	__u32 zero = 0;

	if (!runq_sched_info || th->off_state == WPROF_OFF_RUNQ ||
	    th->off_state == WPROF_OFF_THROTTLED)
		return th->wake_ns;
	stat_add(WPROF_STAT_WAKEUPS, 1);
	return queued_since(th, next, bpf_map_lookup_elem(&clock_cal, &zero), now, typed);
}

/*
 * Close the thread's off-CPU interval at `now`: a blocked interval is split
 * at `wake` (0: unknown, none) into the blocked part and the wait for a CPU
 * after it. The thread's own totals are exact; the stacks get what passes the
 * filters, if the interval is walked (walk_weight()). Only the window's part
 * of it counts (a block is one if its blocked part is in the window).
 * src/profile.c closes intervals still open at the window's end the same way.
 * `task`: the thread, stopped, whose kernel stack is the interval's (NULL:
 * it ran since, unseen). `here`: the current thread is the one, resuming in
 * its __schedule(): both its stacks can be walked now.
 */
static __always_inline void close_interval(void *ctx, struct wprof_thread *th, __u64 now,
					   __u64 wake, struct task_struct *task, bool here)
{
	__u64 start = th->off_since_ns, split, ns, runq;
	__u32 state = th->off_state;
	struct wprof_interval iv = {};

	th->off_since_ns = 0;
	th->wake_ns = 0;
	th->thr_cfs_rq = 0;
	if (state >= WPROF_STATE_CNT || !window_open())
		return;
	split = wprof_interval_split(start, now, wake, state);
	ns = span(start, split);
	if (ns) {
		add_time(th, state, clip(start), ns);
		th->off_ns[state] += ns;
		if (state != WPROF_OFF_THROTTLED) { /* a block: asleep, or in I/O */
			th->blocks++;
			if (ns > th->max_block_ns)
				th->max_block_ns = ns;
			th->hist[wprof_hist_slot(ns / 1000)]++;
		}
		if (part_kept(ns))
			th->kept_ns[state] += ns;
	}
	runq = span(split, now);
	if (runq) {
		add_time(th, WPROF_OFF_RUNQ, clip(split), runq);
		th->off_ns[WPROF_OFF_RUNQ] += runq;
		if (part_kept(runq))
			th->kept_ns[WPROF_OFF_RUNQ] += runq;
	}
	if ((ns && !part_kept(ns)) || (runq && !part_kept(runq)))
		stat_add(WPROF_STAT_FILTERED, (ns && !part_kept(ns)) + (runq && !part_kept(runq)));
	if (!(ns && part_kept(ns)) && !(runq && part_kept(runq)))
		return;
	iv.weight = walk_weight(now - start);
	if (!iv.weight)
		return;
	iv.kstack_id = th->kstack_id;
	if (!(th->walk & WPROF_WALK_KERNEL)) {
		iv.kstack_id = 0;
		if (here && kernel_stacks)
			iv.kstack_id = kernel_stack(ctx, SCRATCH_RESUME, 0);
		else if (task && kernel_stacks)
			iv.kstack_id = task_kernel_stack(task, SCRATCH_SWITCH);
	}
	iv.start = start;
	iv.state = state;
	iv.ns[0] = ns;
	iv.ns[1] = runq;
	if (!(th->walk & WPROF_WALK_DEFER)) {
		add_interval(th, &iv, th->ustack_id);
		return;
	}
	if (here) {
		stat_add(WPROF_STAT_USER_LATE, 1);
		add_interval(th, &iv, user_stack(ctx, SCRATCH_RESUME));
		return;
	}
	if (!task) { /* it ran since, unseen: its user stack may have changed */
		stat_add(WPROF_STAT_USER_LOST, 1);
		add_interval(th, &iv, 0);
		return;
	}
	/*
	 * walked in the thread's context: by tp_sched_exit() as it gets the CPU,
	 * or by its resume task work as it leaves the kernel
	 */
	if (th->pend.start)
		drop_pending(th);
	th->pend.weight = iv.weight;
	th->pend.kstack_id = iv.kstack_id;
	th->pend.state = iv.state;
	th->pend.ns[0] = iv.ns[0];
	th->pend.ns[1] = iv.ns[1];
	__sync_lock_test_and_set(&th->pend.start, start);
	if (resume_task_work)
		resume_work_schedule(th, task);
}

/*
 * close_interval() for a thread that got a CPU with no sched_switch seen for
 * it: no task to walk the kernel stack of, nothing walked here. A global
 * function: the verifier checks it once, not on every path of the switch
 * programs that leads to one of its two calls (a third of their checking,
 * for switches that come a few times a second).
 */
__weak __noinline int close_unseen(struct wprof_thread *th, __u64 now, __u64 wake)
{
	if (th)
		close_interval(NULL, th, now, wake, NULL, false);
	return 0;
}

/* On-CPU time in the window. */
static __always_inline void add_on(struct wprof_thread *th, __u64 from, __u64 to)
{
	__u64 ns;

	if (!window_open())
		return;
	ns = span(from, to);
	add_time(th, WPROF_ON_CPU, clip(from), ns);
	th->on_ns += ns;
}

#define TASK_STOPPED_TRACED 0x000c /* __TASK_STOPPED | __TASK_TRACED */
#define NR_CLONE 56
#define NR_VFORK 58
#define NR_CLONE3 435

/*
 * Whether a thread leaving the CPU keeps its user stack as it is until it
 * runs again, in its own context (tp_sched_exit()): its user registers are saved
 * on its kernel stack and nothing but the thread itself changes them or the
 * frames they point to. Except:
 * - a stopped or traced thread: its tracer may set its registers and memory;
 * - a vfork parent (or a clone that may be one): the child runs on the
 *   parent's stack meanwhile (glibc's vfork even keeps its return address in
 *   a register while the child overwrites the slot). orig_ax is the syscall
 *   number in a syscall; outside one (an interrupt, a fault) it can equal
 *   those numbers by chance, which only costs a walk now. The child runs
 *   from its wakeup in the parent's clone to the end of the parent's
 *   wait for it: the parent leaves the CPU then preempted (runnable), in
 *   that wait (killable: uninterruptible), traced or frozen, never in a
 *   plain interruptible sleep. That sleep, most blocks (a pipe, a futex,
 *   a poll, a nap), needs no look at the registers.
 */
static __always_inline bool stack_holds(struct task_struct *task, unsigned int state)
{
	struct pt_regs *regs;
	long nr;

	if (state == TASK_INTERRUPTIBLE)
		return true;
	if (state & TASK_STOPPED_TRACED)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return false;
	nr = regs->orig_ax; /* a BTF pointer: a plain load */
	return nr != NR_VFORK && nr != NR_CLONE && nr != NR_CLONE3;
}

/*
 * Before a walk that waits for the resume: the maps of the process of @th
 * (task `task`, a BTF pointer) as the walk will need them. Asked for where
 * stale (proc_maps_of()), only while its executable memory differs from
 * what it was when they were last found current (the thread's maps_exec_vm):
 * two loads at most switches.
 */
static __always_inline void check_maps(struct wprof_thread *th, struct task_struct *task)
{
	struct mm_struct *mm = task->mm;
	__u32 exec_vm;

	if (!mm)
		return;
	exec_vm = mm->exec_vm;
	if (exec_vm == th->maps_exec_vm)
		return;
	if (proc_maps_of(task, th->pid))
		th->maps_exec_vm = exec_vm;
}

/*
 * The stacks of the interval that starts. The kernel stack is walked when
 * the thread gets a CPU again, if the interval is walked (walk_weight()):
 * it cannot change before. So can the user stack, where stack_holds(): then
 * the walk happens in the thread's own context as it resumes: by its resume
 * task work (resume_work_run()) or at sched_exit_tp (tp_sched_exit()). Else
 * it is walked now. Returns the kind of switch (WPROF_STAT_SW_*).
 */
static __always_inline __u32 switch_stacks(void *ctx, struct wprof_thread *th,
					   struct task_struct *prev, bool typed, unsigned int state)
{
	bool runnable = th->off_state == WPROF_OFF_RUNQ, settle = false;
	/* prev is the current task; tp_btf's is a BTF pointer already: no helper call */
	struct task_struct *task = typed ? prev : bpf_get_current_task_btf();

	/*
	 * A walked interval still waits for its user stack. With the exit
	 * program, the resume that should have walked it was not seen: it ran
	 * since. With the task work, the thread is leaving the CPU again before
	 * it left the kernel (a read that blocks once per page): its user stack
	 * is still the one the interval blocked with, if its registers are too.
	 * Walked now, here, for both intervals.
	 */
	if (th->pend.start) {
		if (resume_task_work && user_stacks && resume_regs_hold(th, task))
			settle = true;
		else
			drop_pending(th);
	}
	th->walk = 0;
	th->ustack_id = 0;
	th->kstack_id = 0;
	/*
	 * After the window's end the window-end iterator has already passed: an
	 * interval that opens now stays open, and is walked now or never.
	 */
	if (!typed || window_end_ns) {
		/* raw_tp: no task pointer to walk the kernel stack of at switch-in */
		th->kstack_id = kernel_stacks ? kernel_stack(ctx, SCRATCH_SWITCH, switch_kstack_skip) : 0;
		th->walk |= WPROF_WALK_KERNEL;
	}
	if (!user_stacks || (task->flags & (PF_KTHREAD | PF_USER_WORKER))) {
		th->walk |= WPROF_WALK_USER;
		return WPROF_STAT_SW_KTHREAD;
	}
	if (!settle && typed && resume_walk && !window_end_ns && stack_holds(task, state)) {
		th->walk |= WPROF_WALK_DEFER;
		/*
		 * The walk at resume needs the process's maps as they are
		 * then: where they are stale (a program exec'd since, still
		 * mapping its libraries), user space is asked now, with the
		 * whole block to read them in, not at the resume.
		 */
		if (cfi_walk)
			check_maps(th, task);
		if (!check_deferred)
			return WPROF_STAT_SW_DEFERRED;
	}
	/* one walk site: the verifier follows the unwinder once */
	th->ustack_id = user_stack(ctx, SCRATCH_SWITCH);
	if (settle)
		settle_pending(th, 0, th->ustack_id, WPROF_STAT_USER_LATE);
	if (th->walk & WPROF_WALK_DEFER) /* kept to compare with the walk at resume */
		return WPROF_STAT_SW_DEFERRED;
	th->walk |= WPROF_WALK_USER;
	return runnable ? WPROF_STAT_SW_PREEMPT : WPROF_STAT_SW_WALKED;
}

/*
 * A switch of the thread of @th at `now`, kept no earlier than its last one
 * (the one of its on- or off-CPU time going on). Timed by a run queue's clock,
 * a switch can come out a little earlier, on another CPU or calibrated anew
 * since (switch_time()); and see switch_in(): its times stay in order, and
 * add up.
 */
static __always_inline __u64 not_before_last(const struct wprof_thread *th, __u64 now)
{
	__u64 last = th->oncpu_since_ns > th->off_since_ns ? th->oncpu_since_ns : th->off_since_ns;

	return now > last ? now : last;
}

/*
 * The last switch-out of the thread of @th, `tid`, at `now`: its entry goes
 * to user space. A global function, checked once (see close_unseen()).
 */
__weak __noinline int thread_exited(struct wprof_thread *th, __u32 tid, __u64 now)
{
	if (!th)
		return 0;
	th->exit_ns = now;
	th->off_since_ns = 0;
	drop_pending(th);
	if (resume_task_work)
		bpf_map_delete_elem(&resume_works, &tid);
	return thread_retire(tid);
}

static __always_inline __u32 switch_out(void *ctx, struct task_struct *prev, bool preempt,
					unsigned int state, __u64 now, __u64 steal, bool typed)
{
	__u32 tid = TASK_READ(prev, pid, typed), pid = TASK_READ(prev, tgid, typed);
	struct wprof_thread *th;

	th = thread_get(prev, pid, tid, now, NEW_SCHED);
	if (!th)
		return WPROF_STAT_SW_WALKED;
	now = not_before_last(th, now);
	if (th->oncpu_since_ns) {
		add_on(th, th->oncpu_since_ns, now);
		steal_end(th, steal, bpf_get_smp_processor_id(), th->oncpu_since_ns, now);
	} else if (!th->off_since_ns) { /* first seen going off: on since first seen */
		add_on(th, th->first_ns, now);
	} else {
		/*
		 * It got back on a CPU without a sched_switch event (seen on
		 * a 6.18 VM, tens of times in 4 s, always next to the same
		 * few threads of one process; the kernel's own trace event
		 * misses them too). The scheduler has just updated its
		 * runtime: what it ran since it was last picked tells when
		 * that was. Where its wakeup went unseen as well, its run
		 * delay since it left tells how long it waited for the CPU
		 * before (the counter grows as a thread gets the CPU).
		 */
		__u64 ran = TASK_READ(prev, se.sum_exec_runtime, typed) -
			    TASK_READ(prev, se.prev_sum_exec_runtime, typed);
		__u64 in = ran < now - th->off_since_ns ? now - ran : th->off_since_ns;
		__u64 delay = TASK_READ(prev, sched_info.run_delay, typed) - th->run_delay_out;

		stat_add(WPROF_STAT_UNTRACED_IN, 1);
		close_unseen(th, in, unseen_wake(th, in, delay));
		add_on(th, in, now); /* a task clock time: no steal in it */
	}
	th->oncpu_since_ns = 0;
	/* its name as it was last seen: at its end, or at the window's */
	if (!end_iter || (state & (TASK_DEAD | EXIT_ZOMBIE | EXIT_DEAD)))
		bpf_get_current_comm(th->comm, sizeof(th->comm));
	if (state & (TASK_DEAD | EXIT_ZOMBIE | EXIT_DEAD)) {
		thread_exited(th, tid, now); /* `th` is not to be written after this */
		return WPROF_STAT_SW_KTHREAD;
	}
	stat_add(WPROF_STAT_SWITCHES, 1);
	th->off_state = off_state(preempt, state);
	th->off_since_ns = now;
	th->run_delay_out = TASK_READ(prev, sched_info.run_delay, typed);
	throttle_out(th, prev, th->off_state == WPROF_OFF_RUNQ, typed);
	th->wake_ns = 0;
	if (record_wakers) { /* else never set: no cache line of theirs to touch */
		th->waker_ustack_id = 0;
		th->waker_kstack_id = 0;
		th->waker_comm[0] = 0;
	}
	return switch_stacks(ctx, th, prev, typed, state);
}

/*
 * What can be walked of the stacks of a thread that left the CPU unseen, as
 * it gets a CPU again: still in the __schedule() it left with, its kernel
 * stack is that interval's (close_interval() walks it, typed: a task
 * pointer), and its user stack too, walked as it resumes, where it holds
 * still (switch_stacks()). raw_tp: neither (no task pointer to walk).
 */
static __always_inline __u32 unseen_walk(struct task_struct *next, bool typed)
{
	if (!typed)
		return WPROF_WALK_USER | WPROF_WALK_KERNEL;
	/* traced: the state it left with unknown, a tracer may have changed its registers */
	if (!user_stacks || !resume_walk || window_end_ns || next->ptrace ||
	    (next->flags & (PF_KTHREAD | PF_USER_WORKER)) || !stack_holds(next, TASK_RUNNING))
		return WPROF_WALK_USER;
	return WPROF_WALK_DEFER;
}

/*
 * The thread of @th, task `next`, gets a CPU at `now`, but left one unseen
 * since it was last seen getting one (the kernel gave no sched_switch event:
 * on this VM's 6.18, two threads of its agent leave the CPU so at nearly
 * every run, and bpftrace sees no such event either). It ran what the
 * scheduler counted since (se.sum_exec_runtime): on-CPU that long from then,
 * and off-CPU for the rest, with no stack: blocked (asleep, most likely)
 * until its wait for this CPU (switch_wake()). Where its run time then is not
 * known, on-CPU until now.
 */
static __always_inline void untraced_out(void *ctx, struct wprof_thread *th,
					 struct task_struct *next, __u64 now, bool typed)
{
	__u64 ran = TASK_READ(next, se.sum_exec_runtime, typed) - th->exec_in, out = now;

	stat_add(WPROF_STAT_UNTRACED_OUT, 1);
	if (th->exec_in && ran < now - th->oncpu_since_ns)
		out = th->oncpu_since_ns + ran;
	add_on(th, th->oncpu_since_ns, out);
	th->oncpu_since_ns = 0;
	th->steal_in = 0; /* its run is the task clock's, without steal; or not known */
	if (out == now)
		return;
	th->off_since_ns = out;
	th->off_state = WPROF_OFF_SLEEP;
	th->walk = unseen_walk(next, typed);
	/* the walk at its resume needs its maps as they are then (switch_stacks()) */
	if ((th->walk & WPROF_WALK_DEFER) && cfi_walk)
		check_maps(th, next);
	th->ustack_id = 0;
	th->kstack_id = 0;
	th->wake_ns = 0;
	th->run_delay_out = TASK_READ(next, sched_info.run_delay, typed);
}

static __always_inline void switch_in(void *ctx, struct task_struct *next, __u64 now, __u64 steal,
				      bool typed)
{
	__u32 tid = TASK_READ(next, pid, typed), pid = TASK_READ(next, tgid, typed);
	struct wprof_thread *th;

	th = thread_lookup(tid);
	if (!th) {
		th = thread_get(next, pid, tid, now, NEW_SCHED);
		if (!th)
			return;
		/*
		 * Not seen since the window opened (the start snapshot had
		 * not reached it), and coming onto a CPU: off-CPU since then.
		 * Where wakeups are seen, without one (on_wakeup() would
		 * have made its entry): runnable all along, waiting for a
		 * CPU. Its kernel stack is still the one it left the CPU
		 * with; its user stack is not known.
		 */
		if (th->first_ns < now) {
			stat_add(WPROF_STAT_USER_LOST, 1); /* as in wakee_entry() */
			th->off_since_ns = th->first_ns;
			th->off_state = WPROF_OFF_RUNQ;
			/*
			 * With no wakeup events, it may as well have been
			 * blocked, then woken: the scheduler's count of its
			 * current wait says how long it waited for the CPU
			 * (asleep before that, most likely).
			 */
			if (runq_sched_info) {
				th->off_state = WPROF_OFF_SLEEP;
				th->run_delay_out = TASK_READ(next, sched_info.run_delay, typed);
			}
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
	now = not_before_last(th, now);
	/* it left unseen: off-CPU since it last ran, that interval closed here too */
	if (!th->off_since_ns && th->oncpu_since_ns)
		untraced_out(ctx, th, next, now, typed);
	if (th->off_since_ns) {
		__u64 wake;

		throttle_in(th, next, now, typed);
		wake = switch_wake(th, next, now, typed);
		/* after throttle_in(): its runqueue part only, not the throttled one */
		ran_wait(th, now, wake);
		close_interval(ctx, th, now, wake, typed ? next : NULL, false);
	}
	th->oncpu_since_ns = now;
	th->exec_in = TASK_READ(next, se.sum_exec_runtime, typed);
	steal_begin(th, steal, bpf_get_smp_processor_id());
	/* a pending interval has only just been set: it is this one */
	if (typed && resume_walk && !resume_task_work)
		resume_expect(tid, th->pend.start != 0);
}

/*
 * When a switch happens. The scheduler ends prev's run and starts next's
 * when __schedule() starts (it reads its clock then); our sched_switch
 * program runs later, by the time __schedule() takes to pick next and by
 * whatever runs on the tracepoint before it. The first part is about the
 * same at a thread's switch-in as at its switch-out: it cancels out of the
 * thread's run and wait times. The second need not: another profiler
 * attached earlier walks the stacks of its own targets as they leave the
 * CPU, so a thread that comes on after one of them is seen several
 * microseconds late, and one that leaves before one of them is not. That
 * moved 3 us of every run of such a thread from on-CPU to run-queue time
 * (-11% on-CPU at 30 us runs).
 *
 * So when user space finds other BPF programs on sched_switch at the start
 * (src/session.c: choose_switch_time()), entry_stamp is set:
 * sched_entry_tp (6.16+), the first thing __schedule() does, stamps the
 * time on its CPU, and the sched_switch of the same call reads it:
 * __schedule() does not nest, and every call fires sched_entry_tp before
 * sched_switch. The stamp is taken by the one sched_switch that reads it,
 * so no clock read is needed here to tell it is this call's: a
 * __schedule() that switches nothing leaves its stamp for the next one to
 * overwrite. Where there is none (a CPU that has not entered __schedule()
 * since the program was attached), or once the window has closed (the
 * programs are then detached, sched_entry_tp maybe first, and a stamp left
 * would stay stale), the switch is timed here. Without other programs the
 * stamp is not worth its cost: a program run at every __schedule().
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sched_entry_ns SEC(".maps");

static __always_inline __u64 switch_read(void)
{
	__u64 *entry, ts;
	__u32 zero = 0;

	if (!entry_stamp)
		return bpf_ktime_get_ns();
	entry = bpf_map_lookup_elem(&sched_entry_ns, &zero);
	if (!entry)
		return bpf_ktime_get_ns();
	ts = *entry;
	*entry = 0;
	if (!ts || window_end_ns)
		return bpf_ktime_get_ns();
	return ts;
}

/*
 * Where the kernel's BTF shows the way to a task's run queue, and
 * WPROF_SWITCH_TIME does not choose one of the above, a switch is timed by
 * the clock __schedule() read as it started, not by a clock read here,
 * which costs a fifth of tp_switch's time on a VM (75 ns of 345 a run under
 * --stats: the helper's indirect call and return thunks). That is the run
 * queue's clock, updated as __schedule() takes the run queue's lock; no
 * program that runs on the tracepoint before this one delays it. It is a
 * sched_clock() time, moved to the monotonic one by this CPU's calibration
 * (struct clock_cal).
 *
 * The scheduler leaves its clock as a wakeup that asked for the switch set
 * it (its enqueue), earlier than the switch by the time the CPU took to get
 * to it. The switches where that can be told, or is likely, read the clock
 * (`stale`), and are left out of the calibration:
 * - from the idle task (the CPU's way out of idle, 6 to 15 us on this VM, is
 *   the woken thread's wait for the CPU);
 * - to a thread queued at the clock's own time (prev went on to where it
 *   could be switched out: 0.5 us on a pipe, the rest of the writer's
 *   write()), or to one with no queueing time (woken while still queued);
 * - of a prev that is still runnable (preempted, or yielding): a wakeup
 *   may have asked for the switch and another thread been picked.
 * The others read the clock to keep the calibration: one in
 * CLOCK_READ_EVERY, chosen at random, and any CLOCK_READ_NS or more after
 * the CPU's last (a CPU that switches seldom keeps its offset fresh), every
 * one before the window opens, and any before the CPU has an offset. Those
 * are still timed by the run queue's clock, as the others are.
 *
 * A clock update skipped so, then made by something else before the switch
 * (the tick, another wakeup), is not told. Against a clock read at every
 * switch of a mixed run on this VM, the clock __schedule() read was more
 * than 2 us earlier at 0.27% of the 472,000 switches timed by it: 83% of
 * those switches to idle, where the scheduler balances load after
 * __schedule() starts (time the blocking thread is off the CPU); the other
 * 0.05% by up to 49 us.
 */
#define CLOCK_READ_EVERY 16
#define CLOCK_READ_NS 1000000ULL

/* `ts`, counted as a switch timed by the clock `stat` says */
static __always_inline __u64 timed_by(__u64 ts, __u32 stat)
{
	if (window_start_ns)
		stat_add(stat, 1);
	return ts;
}

/*
 * The time of a switch on this CPU: `clock`, its run queue's (0 where not
 * runq_sched_info), `queued`, next's sched_info.last_queued, the two tasks'
 * tids, and whether prev stays runnable. Inlined, not a function of its own:
 * on this VM a call and its return (through the return thunk) cost 10-15 ns
 * of tp_switch's 320 a run (--stats, a pinned pipe). The verifier accepts it
 * inlined with every option (switch_time.sh checks the programs that run).
 */
static __always_inline __u64 switch_time(__u64 clock, __u64 queued, __u32 prev_tid,
					 __u32 next_tid, bool runnable)
{
	struct clock_cal *c;
	__u32 zero = 0;
	bool stale;
	__u64 now;
	__s64 off;

	if (!runq_sched_info)
		return timed_by(switch_read(), WPROF_STAT_TIMED_READ);
	c = bpf_map_lookup_elem(&clock_cal, &zero);
	stale = !prev_tid || runnable || queued == clock || (!queued && next_tid);
	if (switch_rq_clock && !stale && window_start_ns && c &&
	    clock - c->last_clock < CLOCK_READ_NS && draw(DRAW_CLOCK) % CLOCK_READ_EVERY &&
	    clock_cal_offset(c, clock, &off))
		return timed_by(clock + off, WPROF_STAT_TIMED_RQ);
	now = switch_read();
	if (stale)
		return timed_by(now, WPROF_STAT_TIMED_READ);
	clock_cal_add(c, clock, now);
	if (switch_rq_clock && clock_cal_offset(c, clock, &off))
		return timed_by(clock + off, WPROF_STAT_TIMED_RQ);
	return timed_by(now, WPROF_STAT_TIMED_READ);
}

/*
 * --stats times the kinds of switch on one switch in TIMED_EVERY, chosen at
 * random (draw()), and counts that one TIMED_EVERY times: each kind's total
 * is then estimated without bias, and the clock reads that time it (each as
 * long as a switch's cheapest parts) are not paid at every switch. Random,
 * not every n-th: switches come in patterns (two threads taking turns on a
 * CPU). The switches timed are counted per kind too: a kind's mean is taken
 * over them (a kind of 30 switches may have none timed, or one).
 */
#define TIMED_EVERY WPROF_TIMED_EVERY

/* a switch of kind `kind` (WPROF_STAT_SW_*) timed at `ns` */
static __always_inline void timed_kind(__u32 kind, __u64 ns)
{
	stat_add(kind - WPROF_STAT_SW_OTHER + WPROF_STAT_NS_OTHER, ns * TIMED_EVERY);
	stat_add(kind - WPROF_STAT_SW_OTHER + WPROF_STAT_TM_OTHER, 1);
}

static __always_inline bool timed_switch(void)
{
	return time_kinds && draw(DRAW_TIMING) % TIMED_EVERY == 0;
}

/* `typed`: prev and next are BTF pointers (tp_btf), usable with task helpers */
static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state, bool typed)
{
	bool out = is_target(TASK_READ(prev, tgid, typed), TASK_READ(prev, pid, typed));
	bool in = is_target(TASK_READ(next, tgid, typed), TASK_READ(next, pid, typed));
	bool timed = timed_switch();
	__u64 now, steal, t0 = 0, t1 = 0, clk = 0;
	__u32 kind = WPROF_STAT_SW_OTHER;

	if (timed)
		t0 = bpf_ktime_get_ns();
	/* who gets this CPU, for the waits it ends later (bpf/ran.bpf.h) */
	if (ran_instead)
		clk = ran_push(prev, typed);
	/* most switches on a machine concern no target: no clock read for them */
	if (!out && !in) {
		stat_add(WPROF_STAT_SW_OTHER, 1);
		if (timed)
			timed_kind(WPROF_STAT_SW_OTHER, bpf_ktime_get_ns() - t0);
		return 0;
	}
	/* prev is on this CPU: its run queue's */
	if (!ran_instead && runq_sched_info)
		clk = rq_clock_of(prev, typed);
	now = switch_time(runq_sched_info ? clk : 0,
			  TASK_READ(next, sched_info.last_queued, typed), TASK_READ(prev, pid, typed),
			  TASK_READ(next, pid, typed), preempt || prev_state == TASK_RUNNING);
	/* this CPU's steal clock, once for both: prev's run ends and next's begins */
	steal = task_steal_ns(prev, typed);
	if (out) {
		kind = switch_out(ctx, prev, preempt, prev_state, now, steal, typed);
		stat_add(kind, 1);
	}
	if (timed) {
		t1 = bpf_ktime_get_ns();
		if (out)
			timed_kind(kind, t1 - t0);
	}
	if (in) {
		switch_in(ctx, next, now, steal, typed);
		stat_add(WPROF_STAT_SW_IN, 1);
		if (timed)
			timed_kind(WPROF_STAT_SW_IN, bpf_ktime_get_ns() - t1);
	}
	return 0;
}

/*
 * The entry of @p, a target thread being woken (tid, pid), made if it has
 * none: not seen since the window opened, it was blocked since then (the
 * start snapshot had not reached it), in the kernel stack it still has.
 * Interruptibly, most likely: its state is (or is about to be) TASK_RUNNING
 * here. NULL if no entry could be made.
 */
static __always_inline struct wprof_thread *wakee_entry(struct task_struct *p, __u32 pid,
							__u32 tid, bool typed)
{
	struct wprof_thread *th = thread_lookup(tid);
	__u64 now;

	if (th)
		return th;
	now = bpf_ktime_get_ns();
	th = thread_get(p, pid, tid, now, NEW_SCHED);
	if (!th)
		return NULL;
	if (th->first_ns < now && !th->off_since_ns && !th->oncpu_since_ns) {
		/* an interval whose user stack nothing can walk now: counted */
		stat_add(WPROF_STAT_USER_LOST, 1);
		th->off_since_ns = th->first_ns;
		th->off_state = WPROF_OFF_SLEEP;
		/* its wait for a CPU is the one it starts now */
		th->run_delay_out = TASK_READ(p, sched_info.run_delay, typed);
		th->walk = WPROF_WALK_USER | WPROF_WALK_KERNEL;
		if (typed && kernel_stacks)
			th->kstack_id = task_kernel_stack(p, SCRATCH_WAKE);
	}
	return th;
}

/*
 * Where run-queue waits are timed from wakeups (not runq_sched_info): the
 * wakee is queued now, its wait for a CPU starts.
 */
static __always_inline int on_wakeup(struct task_struct *p, bool typed)
{
	__u32 tid = TASK_READ(p, pid, typed), pid = TASK_READ(p, tgid, typed);
	struct wprof_thread *th;

	if (!is_target(pid, tid))
		return 0;
	th = wakee_entry(p, pid, tid, typed);
	if (!th || !th->off_since_ns || th->wake_ns)
		return 0;
	stat_add(WPROF_STAT_WAKEUPS, 1);
	th->wake_ns = bpf_ktime_get_ns();
	return 0;
}

/*
 * --wakers: who woke the thread's current interval, at sched_waking, in the
 * waker's own context: the current task, or what an interrupt landed on.
 * Not at sched_wakeup: a wakeup queued to another CPU (an idle one, most
 * often) fires that on the other CPU, in its interrupt, on whatever task it
 * interrupted. One waking per wakeup (the one that finds the thread
 * asleep); the first of the interval is kept, waker_comm[0] marks it.
 */
static __always_inline int on_waking(void *ctx, struct task_struct *p, bool typed)
{
	__u32 tid = TASK_READ(p, pid, typed), pid = TASK_READ(p, tgid, typed);
	struct wprof_thread *th;

	if (!is_target(pid, tid))
		return 0;
	th = wakee_entry(p, pid, tid, typed);
	if (!th || !th->off_since_ns || th->waker_comm[0])
		return 0;
	th->waker_ustack_id = user_stacks ? user_stack(ctx, SCRATCH_WAKE) : 0;
	th->waker_kstack_id = kernel_stacks ? kernel_stack(ctx, SCRATCH_WAKE, 0) : 0;
	bpf_get_current_comm(th->waker_comm, sizeof(th->waker_comm));
	th->waker_pid = bpf_get_current_pid_tgid() >> 32;
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
	th = thread_get(p, pid, tid, now, NEW_SCHED);
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

	if (!pm)
		return;
	/* full (or, unpreallocated, no memory): walks wait for user space to send its maps */
	if (bpf_map_update_elem(&proc_maps, &cpid, pm, BPF_ANY)) {
		stat_add(WPROF_STAT_MAPS_INHERIT_FAILED, 1);
		return;
	}
	pm = bpf_map_lookup_elem(&proc_maps, &cpid);
	if (pm) {
		pm->start_ticks = start;
		pm->asked_ns = 0;
		pm->held = 0;
	}
}

/* An exec replaces every mapping: the process's maps are void from now on. */
static __always_inline void forget_maps(__u32 pid)
{
	struct wprof_proc_maps *pm = bpf_map_lookup_elem(&proc_maps, &pid);

	if (pm) {
		pm->nr = 0;
		pm->asked_ns = 0;
		pm->held = 0; /* a new program, a new budget */
	}
}

/*
 * With `-- CMD`, processes the command forks are targets too. Any new target
 * process is reported, to have its mappings captured while it lives.
 */
static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), cpid = BPF_CORE_READ(child, tgid);
	/* its parent's, to name its frames by if it is gone before user space reads its maps */
	struct wprof_event e = { .pid = cpid, .kind = WPROF_EV_FORK, .ppid = ppid };
	__u8 one = 1;

	if (ppid == cpid) /* a thread */
		return 0;
	/* a child left out of a full map is not recorded at all: counted */
	if (follow_children && filter_mode == WPROF_FILTER_PID &&
	    bpf_map_lookup_elem(&targets, &ppid) &&
	    bpf_map_update_elem(&targets, &cpid, &one, BPF_ANY))
		stat_add(WPROF_STAT_TARGETS_FULL, 1);
	if (!is_target(cpid, cpid))
		return 0;
	e.start_ticks = start_ticks(child);
	e.parent_start_ticks = start_ticks(BPF_CORE_READ(parent, group_leader));
	e.fork_ns = bpf_ktime_get_ns();
	inherit_maps(ppid, cpid, e.start_ticks);
	notify_event(&e);
	return 0;
}

/* CMD's first instruction: its recording starts here, not at fork. */
static __always_inline int on_exec(struct task_struct *p, bool typed)
{
	__u32 tid = TASK_READ(p, pid, typed), pid = TASK_READ(p, tgid, typed);
	__u64 now = bpf_ktime_get_ns();
	struct wprof_thread *th;

	forget_maps(pid);
	th = thread_lookup(tid);
	if (th) { /* the registers are the new program's: the old call's stack is gone */
		drop_pending(th);
		th->maps_exec_vm = 0;
	}
	if (exec_gate_tgid && pid == exec_gate_tgid) {
		exec_gate_tgid = 0;
	} else {
		if (is_target(pid, tid))
			notify(pid, WPROF_EV_EXEC);
		return 0;
	}
	notify(pid, WPROF_EV_EXEC);
	th = thread_get(p, pid, tid, now, NEW_TASK);
	if (th) {
		th->first_ns = now;
		th->oncpu_since_ns = now;
		th->exec_in = TASK_READ(p, se.sum_exec_runtime, typed);
		steal_begin(th, task_steal_ns(p, typed), bpf_get_smp_processor_id());
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

/*
 * A target thread that got the CPU with no sched_switch seen for it (this
 * VM's 6.18 kernel does that a few times a second, and the kernel's own trace
 * event misses it too): it is still in its __schedule(), its stacks as it
 * left the CPU. Its interval closes now, with both stacks walked here. Now,
 * not at this CPU's last sched_entry_tp: the __schedule() that switched to
 * it went unseen too, that stamp can be from before its wakeup (a nap of
 * 3 ms came out 0.7 ms long). The switch happened a few microseconds ago.
 */
static __always_inline void resume_unseen(void *ctx, __u64 id)
{
	__u32 tid = (__u32)id;
	struct wprof_thread *th;
	__u64 now, delay;

	if (!is_target(id >> 32, tid))
		return;
	th = thread_lookup(tid);
	if (!th || !th->off_since_ns || th->oncpu_since_ns)
		return;
	now = bpf_ktime_get_ns();
	if (now < th->off_since_ns)
		now = th->off_since_ns;
	/*
	 * Its wakeup can go unseen as well. The scheduler's own count of its
	 * run-queue wait says how long it waited for this CPU since.
	 */
	delay = bpf_get_current_task_btf()->sched_info.run_delay - th->run_delay_out;
	stat_add(WPROF_STAT_UNTRACED_RESUMED, 1);
	close_interval(ctx, th, now, unseen_wake(th, now, delay), NULL, true);
	th->oncpu_since_ns = now;
	th->exec_in = bpf_get_current_task_btf()->se.sum_exec_runtime;
	steal_begin(th, task_steal_ns(bpf_get_current_task_btf(), true), bpf_get_smp_processor_id());
}

/*
 * The thread that has just got the CPU, in its own context, before it leaves
 * the kernel: walk the user stack of its interval if that was left to now.
 * Its registers and stack are still the ones it left the CPU with.
 */
SEC("tp_btf/sched_exit_tp")
int BPF_PROG(tp_sched_exit)
{
	/* the task's own fields, not bpf_get_current_pid_tgid(): a helper call */
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0, tid = task->pid;
	__u64 id = (__u64)task->tgid << 32 | tid, t0 = 0, expect, *slot;
	struct wprof_thread *th;

	slot = bpf_map_lookup_elem(&resume_tid, &zero);
	if (!slot)
		return 0;
	expect = *slot;
	*slot = 0;
	if ((__u32)expect != tid) {
		if (expect & RESUME_WALK) {
			/* never seen so far: the thread it was for runs unwalked */
			__u32 other = (__u32)expect;

			stat_add(WPROF_STAT_RESUME_MISSED, 1);
			th = thread_lookup(other);
			if (th)
				drop_pending(th);
		}
		resume_unseen(ctx, id);
		return 0;
	}
	if (!(expect & RESUME_WALK))
		return 0;
	th = thread_lookup(tid);
	if (!th || !th->pend.start)
		return 0;
	if (time_kinds)
		t0 = bpf_ktime_get_ns();
	settle_resumed(th, user_stack(ctx, SCRATCH_RESUME), t0);
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
	return on_wakeup(p, true);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(tp_waking, struct task_struct *p)
{
	return on_waking(ctx, p, true);
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
	return on_wakeup(p, false);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_waking, struct task_struct *p)
{
	return on_waking(ctx, p, false);
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
