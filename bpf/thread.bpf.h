/* SPDX-License-Identifier: GPL-2.0-only */
/* Thread bookkeeping shared by the scheduler programs and the start snapshot. */
#ifndef WPROF_THREAD_BPF_H
#define WPROF_THREAD_BPF_H

#include "common.bpf.h"

#define TASK_RUNNING 0x0000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_NOLOAD 0x0400
#define EXIT_DEAD 0x0010
#define EXIT_ZOMBIE 0x0020
#define TASK_DEAD 0x0080

/* Kernels before 5.14 call the field `state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/*
 * A task field: a direct load where the pointer is typed (tp_btf, iterators),
 * a probe read where it is a raw value (raw_tp). `typed` is a constant at
 * every call, so each program keeps one of the two.
 */
#define TASK_READ(t, field, typed) ((typed) ? (t)->field : BPF_CORE_READ(t, field))

static __always_inline bool window_open(void)
{
	return window_start_ns != 0;
}

/* A time inside the window: at its start if earlier, at its end if later. */
static __always_inline __u64 clip(__u64 ts)
{
	__u64 end = window_end_ns;

	if (ts < window_start_ns)
		ts = window_start_ns;
	if (end && ts > end)
		ts = end;
	return ts;
}

/* The window's part of [from, to]. */
static __always_inline __u64 span(__u64 from, __u64 to)
{
	return to > from ? clip(to) - clip(from) : 0;
}

static __always_inline __u32 off_state(bool preempt, unsigned int state)
{
	if (preempt || state == TASK_RUNNING)
		return WPROF_OFF_RUNQ;
	/* TASK_IDLE (uninterruptible + noload) is an idle kthread, not I/O */
	if ((state & TASK_UNINTERRUPTIBLE) && !(state & TASK_NOLOAD))
		return WPROF_OFF_DISK;
	return WPROF_OFF_SLEEP;
}

/*
 * The run queue task `t` is on, through its CFS entity's queue (which exists
 * with CONFIG_FAIR_GROUP_SCHED, for tasks of every class: user space checks
 * the kernel's BTF for it before it sets runq_sched_info).
 */
static __always_inline struct rq *task_rq_of(struct task_struct *t, bool typed)
{
	return typed ? t->se.cfs_rq->rq : BPF_CORE_READ(t, se.cfs_rq, rq);
}

/* The clock of that run queue: rq_clock(), as the scheduler last updated it. */
static __always_inline __u64 rq_clock_of(struct task_struct *t, bool typed)
{
	return typed ? task_rq_of(t, typed)->clock : BPF_CORE_READ(task_rq_of(t, typed), clock);
}

/*
 * Steal: the scheduler's task clock (schedstat, getrusage) leaves out the
 * time the hypervisor ran something else while a thread was current on a
 * vCPU; the run queue's steal clock (prev_steal_time_rq) is that time summed,
 * as of its last clock update (__schedule() updates it before sched_switch).
 * A run's steal is its growth from the switch-in to the switch-out.
 */
/* The field exists only with CONFIG_PARAVIRT_TIME_ACCOUNTING: a flavor, checked at load. */
struct rq___steal {
	u64 prev_steal_time_rq;
} __attribute__((preserve_access_index));

/* @typed: @rq is a BTF pointer (tp_btf, iterators): a direct load, no probe read */
static __always_inline __u64 rq_steal_ns(struct rq *rq, bool typed)
{
	struct rq___steal *r = (struct rq___steal *)rq;

	if (!bpf_core_field_exists(r->prev_steal_time_rq))
		return 0;
	return typed ? r->prev_steal_time_rq : BPF_CORE_READ(r, prev_steal_time_rq);
}

/*
 * The steal clock of the CPU task @t is on (prev at a switch: this one), through
 * its run queue (see task_rq_of()); 0 where not accounted.
 */
static __always_inline __u64 task_steal_ns(struct task_struct *t, bool typed)
{
	if (!steal_time)
		return 0;
	return rq_steal_ns(task_rq_of(t, typed), typed);
}

/* The thread of @th gets CPU `cpu`, whose steal clock reads `steal` then. */
static __always_inline void steal_begin(struct wprof_thread *th, __u64 steal, __u32 cpu)
{
	if (!steal_time)
		return;
	th->steal_cpu = cpu;
	th->steal_since = 0;
	th->steal_in = steal;
}

/*
 * The window's part of `steal`, taken in a run's stretch from `from` to `to`
 * (one across an edge of the window: its share, in 1/65536, no overflow
 * under days); never more than the stretch's part.
 */
static __always_inline __u64 steal_share(__u64 steal, __u64 from, __u64 to)
{
	__u64 len = to - from, part = span(from, to);

	if (part < len)
		steal = (steal * ((part << 16) / len)) >> 16;
	return steal < part ? steal : part;
}

/*
 * The run of @th from `from` to `to` ends on CPU `cpu`, whose steal clock
 * reads `steal`: the growth since the switch-in (or since its last sample
 * took its part, steal_sample()), the window's part of it, goes to
 * off_ns[WPROF_STEAL]. Only where the run began on that CPU: a
 * switch the kernel gave no event for can leave a run open on one CPU while
 * the task runs on another, and CPUs' clocks differ. The switch-in's reading
 * is taken by exchange, and the sum added atomically: the window-end
 * iterator closes a run still going on another CPU, where that run's own
 * switch-out may come at the same time.
 */
static __always_inline void steal_end(struct wprof_thread *th, __u64 steal, __u32 cpu,
				      __u64 from, __u64 to)
{
	__u64 in, since = th->steal_since;

	if (!steal_time || cpu != th->steal_cpu)
		return;
	in = __sync_lock_test_and_set(&th->steal_in, 0);
	if (since > from)
		from = since;
	if (!in || steal <= in || to <= from || !window_open())
		return;
	__sync_fetch_and_add(&th->off_ns[WPROF_STEAL], steal_share(steal - in, from, to));
}

/*
 * A sample of the thread of @th, current on CPU `cpu` (whose steal clock
 * reads `steal`) at `now`: the steal of its run since the switch-in or its
 * last sample, the window's part, which is returned for the sample's stacks
 * and added to the thread's. The hypervisor's pause ends in the timer
 * interrupt that takes the sample (its timer expired meanwhile), so that
 * stack is where the thread was stopped; the clock is as of the run queue's
 * last update, the scheduler tick's, which comes first in that interrupt
 * unless the sampling timer expired before it. What the samples do not
 * take is steal_end()'s, shared out by user space. 0: none, or no run known
 * on this CPU (the reading is moved on only by a compare-and-swap, so a
 * run closed meanwhile by the window-end iterator stays closed).
 */
static __always_inline __u64 steal_sample(struct wprof_thread *th, __u64 steal, __u32 cpu,
					  __u64 now)
{
	__u64 in = th->steal_in, from = th->steal_since ? th->steal_since : th->oncpu_since_ns;

	if (!steal_time || !in || cpu != th->steal_cpu || steal <= in || !from || now <= from ||
	    !window_open())
		return 0;
	if (__sync_val_compare_and_swap(&th->steal_in, in, steal) != in)
		return 0;
	th->steal_since = now;
	steal = steal_share(steal - in, from, now);
	__sync_fetch_and_add(&th->off_ns[WPROF_STEAL], steal);
	return steal;
}

/*
 * The scheduler's times (sched_info, the run queue's clock) are sched_clock()
 * times; the programs' are monotonic. Per CPU, the difference of the two
 * clocks is learnt from the switches that read the clock (bpf/sched.bpf.c:
 * switch_time()): each has the time __schedule() read the run queue's clock
 * at (it updates it as it starts, unless a wakeup that asked for the switch
 * has just done so: those are left out), and the program's own clock read,
 * later by what __schedule() did since. The least difference of a round of
 * CLOCK_CAL_SAMPLES switches (at least CLOCK_CAL_ROUND_NS long) is the
 * closest to the clocks' offset. The two drift apart (by 450 ppm on this
 * VM: 0.45 us a second), so the offset at a time is the last round's least,
 * moved by the drift from an older round's, CLOCK_CAL_SPAN_NS or more before
 * (the slope), to tell a time of a CPU that has been idle for a while; a
 * difference under it replaces it at once. Per CPU: one CPU's run queue clock
 * need not agree with another's.
 */
#define CLOCK_CAL_SAMPLES 8
#define CLOCK_CAL_ROUND_NS 4000000ULL
#define CLOCK_CAL_SPAN_NS 1000000000ULL
#define CLOCK_CAL_REACH_NS 60000000000ULL /* moved by the slope this far at most */

struct clock_cal {
	__s64 base;          /* the offset (monotonic - run queue clock) at base_clock */
	__u64 base_clock;    /* 0: no difference seen yet */
	__s64 anchor;        /* an older round's, for the slope; anchor_clock 0: none */
	__u64 anchor_clock;
	__s64 least;         /* this round's least difference, at least_clock */
	__u64 least_clock;
	__u64 round_end;     /* the round lasts until this run queue clock time at least */
	__u64 slope;         /* |drift| per ns of run queue clock, in 2^-32 ns; 0: none */
	__u32 samples;       /* in this round */
	__u32 slope_down;    /* the offset shrinks with time */
	__u64 last_clock;    /* the run queue clock time of the last switch added */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct clock_cal);
} clock_cal SEC(".maps") __weak;

/*
 * One switch of this CPU (@c, its calibration): its run queue `clock`, and
 * the monotonic time `now` of it.
 */
static __always_inline void clock_cal_add(struct clock_cal *c, __u64 clock, __u64 now)
{
	__s64 d = (__s64)(now - clock);
	__u64 span, diff;

	if (!c || !clock)
		return;
	c->last_clock = clock;
	if (!c->samples || d < c->least) {
		c->least = d;
		c->least_clock = clock;
	}
	/*
	 * A difference is never under the offset (but for the drift since
	 * base_clock): one under the base shows it too high (a first read
	 * late by a run queue clock not updated for long, on a CPU that idled)
	 */
	if (!c->base_clock || d < c->base) {
		c->base = d;
		c->base_clock = clock;
	}
	if (!c->round_end)
		c->round_end = clock + CLOCK_CAL_ROUND_NS;
	if (++c->samples < CLOCK_CAL_SAMPLES || clock < c->round_end)
		return;
	if (!c->anchor_clock || c->base_clock - c->anchor_clock >= CLOCK_CAL_SPAN_NS) {
		c->anchor = c->base;
		c->anchor_clock = c->base_clock;
	}
	c->base = c->least;
	c->base_clock = c->least_clock;
	c->samples = 0;
	c->round_end = clock + CLOCK_CAL_ROUND_NS;
	/*
	 * The slope, where the anchor is far enough back (else the last one
	 * stays), and is less than 1/64 (else the rounds' least differences
	 * are not the clocks' offset): one division a round, not one a switch;
	 * no signed division in BPF: its size, then its sign.
	 */
	span = c->base_clock - c->anchor_clock;
	diff = c->base < c->anchor ? c->anchor - c->base : c->base - c->anchor;
	if (c->base_clock > c->anchor_clock && span >= CLOCK_CAL_SPAN_NS / 2 && diff < span / 64) {
		c->slope_down = c->base < c->anchor;
		c->slope = (diff << 32) / span;
	}
}

/*
 * @c's offset at run queue clock time `clock` (see struct clock_cal), or
 * false if it has seen no switch.
 */
static __always_inline bool clock_cal_offset(const struct clock_cal *c, __u64 clock, __s64 *off)
{
	__u64 reach, drift;

	if (!c || !c->base_clock)
		return false;
	*off = c->base;
	if (!c->slope)
		return true;
	reach = clock > c->base_clock ? clock - c->base_clock : c->base_clock - clock;
	if (reach > CLOCK_CAL_REACH_NS)
		reach = CLOCK_CAL_REACH_NS;
	drift = (c->slope * reach) >> 32;
	if (c->slope_down == (clock > c->base_clock))
		*off -= drift;
	else
		*off += drift;
	return true;
}

/*
 * When the thread of @th, task `t` on a run queue (@c: its CPU's
 * calibration), was woken, if it was since it left a CPU: when it was last
 * queued (sched_info.last_queued, cleared as it gets the CPU, after
 * sched_switch) as a monotonic time, less its waits on run queues it has
 * left since (run_delay grew by them), as schedstat counts them; no earlier
 * than the interval's start. `now`: the monotonic time of the switch, the
 * answer's bound. 0: neither queued nor woken since.
 *
 * A CPU has no calibration until a switch of a recorded thread there that
 * is not `stale` (bpf/sched.bpf.c: switch_time()) reads the clock: one that
 * only a thread asleep at the window's start switches to, as it wakes, has
 * none yet (a starved thread pinned beside a busy one: its first wait,
 * 48 ms, came out as sleep). Then the wait so far is told by the run
 * queue's own clock as last updated (at the switch's start, or earlier: a
 * wakeup's update, the tick's): short of the wait by as much, never past it.
 */
static __always_inline __u64 queued_since(const struct wprof_thread *th, struct task_struct *t,
					  const struct clock_cal *c, __u64 now, bool typed)
{
	__u64 queued = TASK_READ(t, sched_info.last_queued, typed);
	__u64 delay = TASK_READ(t, sched_info.run_delay, typed) - th->run_delay_out;
	__u64 wake = now, clock;
	__s64 off;

	if (!queued && !delay)
		return 0;
	if (queued && clock_cal_offset(c, queued, &off)) {
		if (queued + off < now)
			wake = queued + off;
	} else if (queued) {
		clock = rq_clock_of(t, typed);
		if (clock > queued && clock - queued < now) {
			wake = now - (clock - queued);
			stat_add(WPROF_STAT_WAKE_RQ_CLOCK, 1);
		}
	}
	wake -= delay;
	return wake > th->off_since_ns ? wake : th->off_since_ns;
}

/*
 * CFS bandwidth. A group over its CPU quota on a CPU is throttled there until
 * its quota is given again: its threads wait, runnable, and do not run. Since
 * 6.18 a thread leaves the CPU so as it returns to user space, and is queued
 * again when the group is unthrottled; before, the group's whole run queue is
 * taken off the CPU's. Either way the group's run queue on that CPU sums the
 * time it (or an ancestor) was throttled, by the run queue's clock:
 * throttled_clock_self_time, and throttled_clock_self, when the throttle going
 * on began (0: none). A wait's throttled part is that sum's growth over it,
 * told as its first part: exact since 6.18 (a thread is throttled as it leaves
 * the CPU, task_struct.throttled set: no other wait is looked at); before, a
 * wait that began unthrottled has that part moved to its start. Flavors: the
 * run queue's fields exist from 6.6 on (CONFIG_CFS_BANDWIDTH), the task's from
 * 6.18 on.
 */
struct cfs_rq___thr {
	u64 throttled_clock_self;
	u64 throttled_clock_self_time;
	struct rq *rq;
} __attribute__((preserve_access_index));

struct task_struct___thr {
	bool throttled;
} __attribute__((preserve_access_index));

/*
 * The time group run queue @c has been throttled in all, now. @typed: @c is a
 * BTF pointer (direct loads), else a kernel address read with probe reads.
 */
static __always_inline __u64 cfs_throttled_ns(struct cfs_rq___thr *c, bool typed)
{
	__u64 since, sum, clock;

	if (!bpf_core_field_exists(c->throttled_clock_self_time))
		return 0;
	since = typed ? c->throttled_clock_self : BPF_CORE_READ(c, throttled_clock_self);
	sum = typed ? c->throttled_clock_self_time : BPF_CORE_READ(c, throttled_clock_self_time);
	if (!since)
		return sum;
	clock = typed ? c->rq->clock : BPF_CORE_READ(c, rq, clock);
	return clock > since ? sum + (clock - since) : sum;
}

/* Whether task `t`, leaving the CPU runnable, may wait throttled (see above). */
static __always_inline bool may_wait_throttled(struct task_struct *t, bool typed)
{
	struct task_struct___thr *p = (void *)t;

	if (!bpf_core_field_exists(p->throttled))
		return true;
	return typed ? p->throttled : BPF_CORE_READ(p, throttled);
}

/*
 * The thread of @th, task `t`, leaves the CPU (or is found off it) `runnable`:
 * in a group (the root has no quota), its group's run queue and how long that
 * had been throttled, for throttle_in(). Nothing for one that blocks.
 */
static __always_inline void throttle_out(struct wprof_thread *th, struct task_struct *t,
					 bool runnable, bool typed)
{
	struct cfs_rq *c;

	th->thr_cfs_rq = 0;
	if (!throttle_time || !runnable || !may_wait_throttled(t, typed) ||
	    !TASK_READ(t, se.parent, typed))
		return;
	c = TASK_READ(t, se.cfs_rq, typed);
	th->thr_cfs_rq = (__u64)c;
	th->thr_out = cfs_throttled_ns((struct cfs_rq___thr *)c, typed);
}

/*
 * The wait for a CPU of @th, from its start to `now`, as task `t` gets a CPU
 * (NULL: at the window's end): its first part, as long as its group was
 * throttled meanwhile, becomes WPROF_OFF_THROTTLED, up to wake_ns; the rest
 * stays the wait for a CPU (wprof_interval_split()).
 */
static __always_inline void throttle_in(struct wprof_thread *th, struct task_struct *t,
					__u64 now, bool typed)
{
	__u64 c = th->thr_cfs_rq, from = th->off_since_ns, ns;

	th->thr_cfs_rq = 0;
	if (!c || th->off_state != WPROF_OFF_RUNQ || now <= from)
		return;
	/* still on that run queue (the usual): direct loads */
	if (t && typed && (__u64)t->se.cfs_rq == c)
		ns = cfs_throttled_ns((struct cfs_rq___thr *)t->se.cfs_rq, true);
	else
		ns = cfs_throttled_ns((struct cfs_rq___thr *)c, false);
	ns -= th->thr_out;
	if (!ns || (__s64)ns < 0)
		return;
	if (ns > now - from)
		ns = now - from;
	th->off_state = WPROF_OFF_THROTTLED;
	th->wake_ns = from + ns;
}

/*
 * Where a new thread entry is put together (too large for the BPF stack):
 * per CPU, one for the scheduler's events (interrupts off), one for the
 * programs that run with them on (an interrupt's wakeup may come in
 * meanwhile), one for the iterators (sleepable).
 */
enum { NEW_SCHED, NEW_TASK, NEW_ITER, NEW_CNT };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NEW_CNT);
	__type(key, __u32);
	__type(value, struct wprof_thread);
} thread_new SEC(".maps") __weak;

/* A zeroed entry in slot `slot` of thread_new, or NULL. */
static __always_inline struct wprof_thread *thread_blank(__u32 slot)
{
	struct wprof_thread *th = bpf_map_lookup_elem(&thread_new, &slot);

	if (th)
		__builtin_memset(th, 0, sizeof(*th));
	return th;
}

/*
 * Entries of ended threads that a new thread of the same tid took over
 * before user space drained them (the pids wrapped around): user space
 * takes them from here, each a thread of its own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 256);
	__type(value, struct wprof_thread);
} reused_threads SEC(".maps") __weak;

/*
 * @old, the entry of an ended thread whose tid a new task now has: hand it
 * to user space (reused_threads); the caller then makes the entry the new
 * task's. False if another CPU does (the CAS on start_id decides); an event
 * of the new task on another CPU meanwhile may still land in the old entry:
 * a window of a few instructions, once per reuse.
 */
static __always_inline bool thread_reuse(struct wprof_thread *old, __u32 start_id, __u32 slot)
{
	__u32 old_id = old->start_id;
	struct wprof_thread *th;

	if (__sync_val_compare_and_swap(&old->start_id, old_id, start_id) != old_id)
		return false;
	th = thread_blank(slot);
	if (th) {
		__builtin_memcpy(th, old, sizeof(*th));
		th->start_id = old_id;
	}
	if (!th || bpf_map_push_elem(&reused_threads, th, 0))
		stat_add(WPROF_STAT_REUSED_LOST, 1);
	return true;
}

#define SLOT_PROBES 8

/*
 * Slot `j` of the overflow slots of thread `tid`: SLOT_PROBES in a row, from
 * where its tid hashes (the product's high bits: its low ones would be the
 * same for every tid of one first slot).
 */
static __always_inline __u32 slot_probe(__u32 tid, __u32 j)
{
	return slot_over + (((tid * 2654435761u) >> slot_over_shift) + j & slot_over_mask);
}

/*
 * The entry of live thread `tid` (or of an ended one the hash had no room
 * for), or NULL. A slot's tid is written last as its entry is made, and
 * cleared first as the entry moves out: a slot with the tid holds its entry.
 * A tid has one entry at most: entries are made and moved out under the lock
 * of the tid's first slot, and each is looked for everywhere first.
 */
static __always_inline struct wprof_thread *thread_lookup(__u32 tid)
{
	__u32 i = tid & slot_mask;
	struct wprof_thread *s = bpf_map_lookup_elem(&thread_slots, &i);

	if (s && tid && s->tid == tid)
		return s;
	for (__u32 j = 0; j < SLOT_PROBES; j++) {
		i = slot_probe(tid, j);
		s = bpf_map_lookup_elem(&thread_slots, &i);
		if (s && tid && s->tid == tid)
			return s;
	}
	return NULL;
}

/*
 * The lock of a first slot: a few thousand tries. Its holders are BPF
 * programs that copy one entry (all but the start snapshot's with
 * preemption off): a thread that finds it held that long has that event
 * unrecorded, counted (slot_busy).
 */
#define SLOT_LOCK_TRIES 2048

struct lock_try {
	__u32 *lock;
	bool got;
};

/*
 * One try, a bpf_loop() step: the verifier checks it once. As a plain loop it
 * followed all the tries, one by one, in every program that takes a lock
 * (two thirds of tp_switch's checking, nine tenths of tp_exec's).
 */
static long slot_lock_try(__u64 i, struct lock_try *t)
{
	if (*(volatile __u32 *)t->lock || __sync_val_compare_and_swap(t->lock, 0, 1))
		return 0;
	t->got = true;
	return 1;
}

static __always_inline bool slot_lock(__u32 *lock)
{
	struct lock_try t = { .lock = lock };

	bpf_loop(SLOT_LOCK_TRIES, slot_lock_try, &t, 0);
	return t.got;
}

/* Write @th into slot @s, claimed (its tid WPROF_SLOT_CLAIMED), for thread `tid`: its tid last. */
static __always_inline void slot_fill(struct wprof_thread *s, struct wprof_thread *th, __u32 tid)
{
	th->tid = WPROF_SLOT_CLAIMED;
	__builtin_memcpy(s, th, sizeof(*s));
	th->tid = tid;
	__sync_lock_test_and_set(&s->tid, tid);
}

/*
 * Claim slot @s if free: never used, or retired (thread_retire()) two
 * drains ago or more. A program that looked its entry up before it was
 * retired may still be writing there until the next drain's switch of maps,
 * which waits for it: one that starts after the first switch since finds
 * no entry there. Another CPU may be claiming it for another tid.
 */
static __always_inline bool slot_claim(struct wprof_thread *s)
{
	__u32 t;

	if (!s)
		return false;
	t = s->tid;
	if (t == WPROF_SLOT_CLAIMED || (t && !(t & WPROF_SLOT_MARK)))
		return false;
	if (t && (((__u32)slot_epoch - t) & WPROF_SLOT_EPOCH_MASK) < 2)
		return false;
	return __sync_val_compare_and_swap(&s->tid, t, WPROF_SLOT_CLAIMED) == t;
}

/*
 * Make the new entry in slot `scratch` of thread_new (a blank filled in)
 * thread `tid`'s: in a free slot of its own; `replace`: in place of the
 * entry it has (an ended thread's, thread_reuse()). 0, -EEXIST if it has one
 * already (made on another CPU meanwhile), -EBUSY (counted: slot_busy), or
 * -ENOSPC or -EINVAL (counted: threads_full; no slot free, or no scratch
 * entry or lock). A global function: the verifier checks it once.
 */
__weak __noinline int thread_commit(__u32 tid, __u32 scratch, __u32 replace)
{
	struct wprof_thread *th = bpf_map_lookup_elem(&thread_new, &scratch), *s;
	__u32 i = tid & slot_mask, *lock = bpf_map_lookup_elem(&slot_locks, &i);
	int err = -ENOSPC;

	if (!th || !lock || !tid) {
		stat_add(WPROF_STAT_THREADS_FULL, 1);
		return -EINVAL;
	}
	if (!slot_lock(lock)) {
		stat_add(WPROF_STAT_SLOT_BUSY, 1);
		return -EBUSY;
	}
	s = thread_lookup(tid);
	/*
	 * The tid's thread may have ended since the caller looked (the start
	 * snapshot sleeps between): its entry moved to the hash
	 */
	if (!s && !replace) {
		struct wprof_thread *ended = bpf_map_lookup_elem(&threads, &tid);

		if (ended && ended->start_id == th->start_id) {
			err = -EEXIST;
			goto out;
		}
	}
	if (s) {
		err = -EEXIST;
		if (replace) {
			__sync_lock_test_and_set(&s->tid, WPROF_SLOT_CLAIMED);
			slot_fill(s, th, tid);
			err = 0;
		}
		goto out;
	}
	s = bpf_map_lookup_elem(&thread_slots, &i);
	if (slot_claim(s)) {
		slot_fill(s, th, tid);
		err = 0;
		goto out;
	}
	for (__u32 j = 0; j < SLOT_PROBES; j++) {
		i = slot_probe(tid, j);
		s = bpf_map_lookup_elem(&thread_slots, &i);
		if (slot_claim(s)) {
			slot_fill(s, th, tid);
			err = 0;
			break;
		}
	}
out:
	__sync_lock_test_and_set(lock, 0);
	if (err == -ENOSPC)
		stat_add(WPROF_STAT_THREADS_FULL, 1);
	return err;
}

/*
 * Thread `tid` has ended (its last switch-out): its entry moves to the hash,
 * where user space drains ended threads, and its slot is retired, marked
 * with the drain epoch, free again two drains on (slot_claim()). Kept in its
 * slot if the hash has no room or has an entry of the tid still (user space
 * reads it at the end; a new thread of the tid hands it over first,
 * thread_reuse()).
 */
__weak __noinline int thread_retire(__u32 tid)
{
	__u32 first = tid & slot_mask, *lock = bpf_map_lookup_elem(&slot_locks, &first);
	struct wprof_thread *s;

	if (!lock || !tid || !slot_lock(lock))
		return 0;
	s = thread_lookup(tid);
	if (s && !bpf_map_update_elem(&threads, &tid, s, BPF_NOEXIST))
		__sync_lock_test_and_set(&s->tid, WPROF_SLOT_MARK |
					 ((__u32)slot_epoch & WPROF_SLOT_EPOCH_MASK));
	__sync_lock_test_and_set(lock, 0);
	return 0;
}

static __always_inline struct wprof_thread *thread_get(struct task_struct *t, __u32 pid,
						       __u32 tid, __u64 now, __u32 slot)
{
	struct wprof_thread *th;
	__u32 start_id = 0;
	bool reused;
	long err;

	th = thread_lookup(tid);
	/* an ended thread's entry: only its last switch-out may use it, not a new task */
	if (th && !(th->exit_ns && th->start_id != (start_id = task_start_id(t))))
		return th;
	reused = th != NULL;
	if (reused && !thread_reuse(th, start_id, slot))
		return thread_lookup(tid);
	if (!reused)
		start_id = task_start_id(t);
	th = thread_blank(slot);
	if (!th)
		return NULL;
	th->pid = pid;
	th->tid = tid;
	th->start_id = start_id;
	/* a thread first seen now existed since its start or the window's */
	th->first_ns = clip(BPF_CORE_READ(t, start_time));
	if (th->first_ns > now)
		th->first_ns = now;
	BPF_CORE_READ_STR_INTO(&th->comm, t, comm);
	err = thread_commit(tid, slot, reused);
	if (err && err != -EEXIST)
		return NULL;
	return thread_lookup(tid);
}

/* The kernel stack of a task that is not running (BTF task pointer only). */
static __always_inline __u64 task_kernel_stack(struct task_struct *task, __u32 slot)
{
	struct wprof_stack *st = scratch_stack(slot);
	long n;

	if (!st)
		return 0;
	n = bpf_get_task_stack(task, st->ips, sizeof(st->ips), 0);
	if (n < 0) {
		stat_add(WPROF_STAT_KSTACK_ERR, 1);
		return 0;
	}
	st->nr = n / sizeof(__u64);
	return store_stack(st, false);
}

/* Add @ns[] to the thread's time in slices [@slice, @slice + @span) (WPROF_KEY_TIME). */
static __always_inline void put_time(struct wprof_thread *th, __u32 slice, __u32 span,
				     const __u64 *ns)
{
	struct wprof_key key = {
		.pid = th->pid, .tid = th->tid, .state = WPROF_KEY_TIME, .start_id = th->start_id,
		.slice = slice, .span = span,
	};
	struct wprof_time *v, zero = {};
	void *map = active_map(&counts);
	__u64 sum = 0;

	for (int i = 0; i < WPROF_STATE_CNT; i++)
		sum += ns[i];
	if (!sum)
		return;
	v = map ? bpf_map_lookup_elem(map, &key) : NULL;
	if (!v && map) {
		long err = bpf_map_update_elem(map, &key, &zero, BPF_NOEXIST);

		if (!err || err == -EEXIST)
			v = bpf_map_lookup_elem(map, &key);
	}
	if (!v) {
		stat_add(WPROF_STAT_COUNTS_FULL, 1);
		stat_add(WPROF_STAT_DROPPED_NS, sum);
		return;
	}
	/* one thread's key, added to on the CPU it runs on or is switched in on */
	for (int i = 0; i < WPROF_STATE_CNT; i++)
		v->ns[i] += ns[i];
}

/*
 * The thread's totals by state: what its time by slice is told from. Not
 * its steal: in its runs already (user space has it from samples, by slice).
 */
static __always_inline void thread_totals(const struct wprof_thread *th, __u64 *t)
{
	t[WPROF_ON_CPU] = th->on_ns;
	for (int i = 1; i < WPROF_STATE_CNT; i++)
		t[i] = i == WPROF_STEAL ? 0 : th->off_ns[i];
}

/*
 * add_time()'s part that crosses the end of the thread's slice: the time
 * it has in that slice, and the part's pieces before its last slice, go to
 * WPROF_KEY_TIME keys (the whole slices of a long part as one); its last
 * slice becomes the thread's. A global function: checked once.
 */
__weak __noinline int time_edge(struct wprof_thread *th, __u32 state, __u64 from, __u64 ns)
{
	__u64 cur[WPROF_STATE_CNT], v[WPROF_STATE_CNT], e0, e1, last;
	__u32 s0, s1;

	if (!th || !ns || state >= WPROF_STATE_CNT || !slice_ns)
		return 0;
	thread_totals(th, cur);
	s0 = slice_of(from);
	s1 = slice_of(from + ns - 1);
	if (th->acc_edge && s0 < th->acc_slice)
		s0 = th->acc_slice; /* clocks a little apart: from the slice it is in */
	e0 = window_start_ns + (__u64)(s0 + 1) * slice_ns;
	e1 = window_start_ns + (__u64)s1 * slice_ns;
	if (e0 > from + ns)
		e0 = from + ns;
	if (from > e0)
		from = e0;
	/* what the thread's slice has, and the part's first piece if in it too */
	for (int i = 0; i < WPROF_STATE_CNT; i++)
		v[i] = th->acc_edge ? cur[i] - th->acc_base[i] : 0;
	if (s1 > s0 && th->acc_edge && s0 == th->acc_slice) {
		v[state] += e0 - from;
		put_time(th, s0, 1, v);
	} else {
		if (th->acc_edge)
			put_time(th, th->acc_slice, 1, v);
		if (s1 > s0) {
			__builtin_memset(v, 0, sizeof(v));
			v[state] = e0 - from;
			put_time(th, s0, 1, v);
		}
	}
	if (s1 > s0 + 1) {
		__builtin_memset(v, 0, sizeof(v));
		v[state] = e1 - e0;
		put_time(th, s0 + 1, s1 - s0 - 1, v);
	}
	last = s1 > s0 ? from + ns - e1 : ns;
	/* the slice's time is the totals (with this part) less these */
	for (int i = 0; i < WPROF_STATE_CNT; i++)
		th->acc_base[i] = cur[i];
	th->acc_base[state] += ns - last;
	th->acc_slice = s1;
	th->acc_edge = window_start_ns + (__u64)(s1 + 1) * slice_ns;
	return 0;
}

/*
 * --slice: @ns of the thread's time in @state from @from on (in the window,
 * after every time added before), before it is added to its totals. Within
 * its slice: nothing to do, the totals tell; across its end: time_edge().
 */
static __always_inline void add_time(struct wprof_thread *th, __u32 state, __u64 from, __u64 ns)
{
	if (thread_times && ns && from + ns > th->acc_edge)
		time_edge(th, state, from, ns);
}

static __always_inline bool part_kept(__u64 ns)
{
	return ns >= min_block_ns && ns <= max_block_ns;
}

/*
 * One part of a walked interval, @ns from @from on (in the window), added to
 * its stacks with the interval's weight.
 */
static __always_inline void add_part(struct wprof_thread *th, __u64 ustack, __u64 kstack,
				     __u32 state, __u64 from, __u64 ns, __u64 weight, bool waker)
{
	if (!ns || !part_kept(ns))
		return;
	/* a blocked part with a known waker goes to `wakes` instead */
	if (!waker || !record_wakers || !(th->waker_ustack_id | th->waker_kstack_id)) {
		if (!account(th->pid, th->tid, th->start_id, ustack, kstack, state, from, ns,
			     weight))
			th->lost_ns += ns;
	} else {
		struct wprof_wake_key key = {
			.blocked = {
				.pid = th->pid,
				.tid = th->tid,
				.ustack_id = ustack,
				.kstack_id = kstack,
				.state = state,
				.start_id = th->start_id,
			},
			.waker_ustack_id = th->waker_ustack_id,
			.waker_kstack_id = th->waker_kstack_id,
			.waker_pid = th->waker_pid,
		};

		__builtin_memcpy(key.waker_comm, th->waker_comm, sizeof(key.waker_comm));
		if (!add_sliced(active_map(&wakes), &key, from, ns, weight, WPROF_STAT_WAKES_FULL))
			th->lost_ns += ns;
	}
}

/* Send a walked interval of long_block_ns or more whole, with its stacks (counted). */
static __always_inline void send_long_block(struct wprof_thread *th,
					    const struct wprof_interval *iv, __u64 ustack)
{
	struct wprof_long_block *lb;

	if (!long_block_ns || iv->ns[0] + iv->ns[1] < long_block_ns)
		return;
	lb = bpf_ringbuf_reserve(&blocks, sizeof(*lb), 0);
	if (!lb) {
		stat_add(WPROF_STAT_LONG_LOST, 1);
		return;
	}
	lb->pid = th->pid;
	lb->tid = th->tid;
	lb->start_id = th->start_id;
	lb->state = iv->state;
	lb->start = iv->start;
	lb->ns[0] = iv->ns[0];
	lb->ns[1] = iv->ns[1];
	lb->ustack_id = ustack;
	lb->kstack_id = iv->kstack_id;
	lb->pad = 0;
	if (record_wakers) {
		lb->waker_ustack_id = th->waker_ustack_id;
		lb->waker_kstack_id = th->waker_kstack_id;
		lb->waker_pid = th->waker_pid;
		__builtin_memcpy(lb->waker_comm, th->waker_comm, sizeof(lb->waker_comm));
	} else {
		lb->waker_ustack_id = 0;
		lb->waker_kstack_id = 0;
		lb->waker_pid = 0;
		__builtin_memset(lb->waker_comm, 0, sizeof(lb->waker_comm));
	}
	bpf_ringbuf_submit(lb, 0);
	stat_add(WPROF_STAT_LONG_BLOCKS, 1);
}

/*
 * Add a walked interval's parts to its stacks: blocked (in its state) and
 * waiting for a CPU; a long one is sent whole too. A global function: the
 * verifier checks it once, not at every one of its calls.
 */
__weak __noinline int add_interval(struct wprof_thread *th, const struct wprof_interval *iv,
				   __u64 ustack)
{
	__u64 from;

	if (!th || !iv)
		return 0;
	from = clip(iv->start);
	send_long_block(th, iv, ustack);
	add_part(th, ustack, iv->kstack_id, iv->state, from, iv->ns[0], iv->weight, true);
	add_part(th, ustack, iv->kstack_id, WPROF_OFF_RUNQ, from + iv->ns[0], iv->ns[1],
		 iv->weight, false);
	return 0;
}

/*
 * Take the thread's pending interval into `iv` (the caller then owns it), or
 * false when there is none, it is not the one that began at `start` (if
 * `start` is not 0), or someone else (its resume, the window-end iterator)
 * took it first. An interval's start is unique to it: a take that succeeds
 * took the interval it copied.
 */
static __always_inline bool take_pending(struct wprof_thread *th, struct wprof_interval *iv,
					 __u64 start)
{
	__u64 s = th->pend.start;

	if (!s || (start && s != start))
		return false;
	*iv = th->pend;
	return __sync_val_compare_and_swap(&th->pend.start, s, 0) == s && iv->start == s;
}

/*
 * Add the pending interval that began at `start` (0: whichever), if still
 * there, with user stack `ustack` (walked as the thread resumed:
 * WPROF_STAT_USER_LATE; or 0, no longer walkable: WPROF_STAT_USER_LOST,
 * counted).
 */
static __always_inline void settle_pending(struct wprof_thread *th, __u64 start, __u64 ustack,
					   __u32 stat)
{
	struct wprof_interval iv;

	if (!take_pending(th, &iv, start))
		return;
	stat_add(stat, 1);
	add_interval(th, &iv, ustack);
}

static __always_inline void drop_pending(struct wprof_thread *th)
{
	settle_pending(th, 0, 0, WPROF_STAT_USER_LOST);
}

#endif /* WPROF_THREAD_BPF_H */
