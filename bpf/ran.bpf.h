/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who ran instead (struct wprof_ran_key): while a target thread waited for a
 * CPU, which threads had the CPU it then got.
 *
 * Every switch of the machine, of targets or not, adds the run that ends to
 * its runner's slot in the CPU's newest segment (ran_push(): a clock read,
 * where the switch has none of its own, a few compares and an add); a
 * segment takes runs for WPROF_RAN_SEG_NS, or until a fifth runner comes,
 * then the next one begins. So a CPU keeps WPROF_RAN_SEGS runs at least,
 * and WPROF_RAN_SEGS * WPROF_RAN_SEG_NS of time at least where runs are
 * short (a pipe switching 400,000 times a second fills a segment of 32 runs
 * in 80 us: a ring of runs would have held a wait's last 80 us). Only a
 * target that got a CPU after a wait for it pays more: ran_wait() walks the
 * segments back over the wait and adds each runner's share to `ran`.
 *
 * The times are the run queue's clock where runq_sched_info (the one
 * __schedule() read; the switch's own time is taken from it too), else
 * bpf_ktime_get_ns(). A wait, timed otherwise, is placed on the CPU's clock
 * by its distance from the switch that ends it, the CPU's last: no
 * calibration between the two clocks is needed.
 *
 * A segment only partly within the wait gives each of its runners but the
 * waiting thread its share of the overlap (the overlap is within one
 * WPROF_RAN_SEG_NS and a run at the wait's start).
 *
 * Limit: the CPU the thread got is the one looked at. A thread that waited
 * on one CPU and was moved to another had the first one's runners in its
 * way; the second's, named here, may have been idle then.
 */
#ifndef WPROF_RAN_BPF_H
#define WPROF_RAN_BPF_H

#include "common.bpf.h"
#include "thread.bpf.h"

/* WPROF_RAN_INSTEAD=off: no ring, no walk */
const volatile bool ran_instead __weak = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wprof_ran_ring);
} ran_rings SEC(".maps");

/* Sized by user space (a single entry when off). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct wprof_ran_key);
	__type(value, struct wprof_ran_val);
} ran SEC(".maps");

/* Begin a segment at @start: the CPU's runs from then on. */
static __always_inline struct wprof_ran_seg *ran_seg_new(struct wprof_ran_ring *ring, __u64 start)
{
	struct wprof_ran_seg *seg = &ring->segs[++ring->head & (WPROF_RAN_SEGS - 1)];

	seg->start = start;
	seg->nr = 0;
	return seg;
}

/*
 * A switch on this CPU from @prev: its run, from the CPU's last switch to
 * now, goes to its slot in the newest segment. Returns now, the run queue's
 * clock where runq_sched_info (the caller times the switch from it too: no
 * second read). Interrupts are off: the CPU's ring is ours alone.
 */
static __always_inline __u64 ran_push(struct task_struct *prev, bool typed)
{
	__u64 clk = runq_sched_info ? rq_clock_of(prev, typed) : bpf_ktime_get_ns(), last;
	__u32 zero = 0, pid, tid, i;
	struct wprof_ran_ring *ring;
	struct wprof_ran_slot *sl;
	struct wprof_ran_seg *seg;

	ring = bpf_map_lookup_elem(&ran_rings, &zero);
	if (!ring)
		return clk;
	last = ring->last;
	/* a clock left stale by a wakeup can be behind the last switch: a run of 0 */
	if (clk <= last)
		return clk;
	ring->last = clk;
	if (!last)
		return clk;
	seg = &ring->segs[ring->head & (WPROF_RAN_SEGS - 1)];
	if (!seg->start || last - seg->start >= WPROF_RAN_SEG_NS)
		seg = ran_seg_new(ring, last);
	pid = TASK_READ(prev, tgid, typed);
	tid = TASK_READ(prev, pid, typed);
	for (i = 0; i < WPROF_RAN_SLOTS && i < seg->nr; i++) {
		if (seg->slots[i].tid == tid && seg->slots[i].pid == pid)
			break;
	}
	if (i == WPROF_RAN_SLOTS) {
		seg = ran_seg_new(ring, last);
		i = 0;
	}
	sl = &seg->slots[i & (WPROF_RAN_SLOTS - 1)];
	if (i >= seg->nr) {
		seg->nr = i + 1;
		sl->pid = pid;
		sl->tid = tid;
		sl->ns = 0;
		if (typed)
			__builtin_memcpy(sl->comm, prev->comm, sizeof(sl->comm));
		else
			bpf_probe_read_kernel(sl->comm, sizeof(sl->comm), &prev->comm);
	}
	sl->ns += clk - last;
	return clk;
}

/* Add @ns of the wait of @key's thread to its runner (@key's runner fields), named @comm. */
static __always_inline void ran_put(const struct wprof_ran_key *key, const char *comm, __u64 ns)
{
	struct wprof_ran_val *v, nv = { .ns = ns };

	v = bpf_map_lookup_elem(&ran, key);
	if (v) {
		/* a key can be in several CPUs' pend[]: they may put it at once */
		__sync_fetch_and_add(&v->ns, ns);
		return;
	}
	__builtin_memcpy(nv.comm, comm, sizeof(nv.comm));
	if (bpf_map_update_elem(&ran, key, &nv, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&ran, key); /* another CPU made it meanwhile */
		if (v) {
			__sync_fetch_and_add(&v->ns, ns);
			return;
		}
		stat_add(WPROF_STAT_RAN_FULL, 1);
		stat_add(WPROF_STAT_RAN_LOST_NS, ns);
	}
}

static __always_inline bool ran_same(const struct wprof_ran_key *a, const struct wprof_ran_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

/*
 * The same, through the CPU's pend[]: a thread that waits behind the same
 * runner again and again (two threads taking turns on a CPU) adds to its
 * slot there, no hash lookup. A slot taken by another key is put in `ran`
 * first. @comm NULL: no name.
 */
static __always_inline void ran_add(struct wprof_ran_ring *ring, const struct wprof_ran_key *key,
				    const char *comm, __u64 ns)
{
	struct wprof_ran_pend *p;

	if (!ns)
		return;
	p = &ring->pend[((key->tid ^ key->runner_tid * 0x9e3779b1u) * 0x9e3779b1u) >>
			(32 - WPROF_RAN_PEND_BITS)];
	if (p->ns && ran_same(&p->key, key)) {
		p->ns += ns;
		return;
	}
	if (p->ns)
		ran_put(&p->key, p->comm, p->ns);
	p->key = *key;
	p->ns = ns;
	if (comm)
		__builtin_memcpy(p->comm, comm, sizeof(p->comm));
	else
		__builtin_memset(p->comm, 0, sizeof(p->comm));
}

/* What ran_walk() walks one segment with */
struct ran_walk {
	struct wprof_ran_ring *ring;
	struct wprof_ran_key key;
	__u64 from, to;
	__u64 end; /* the end of the segment to walk: the start of the one after it */
};

/*
 * One segment, newest first (a bpf_loop() step, checked once): its runners
 * but the waiting thread share its overlap with the wait by their time in
 * it. 1 stops the walk: the wait's start reached, or no more segments.
 */
static long ran_walk_seg(__u64 k, struct ran_walk *w)
{
	struct wprof_ran_seg *seg = &w->ring->segs[(w->ring->head - k) & (WPROF_RAN_SEGS - 1)];
	__u64 start = seg->start, end = w->end, lo, hi, others = 0, share;
	__u32 nr = seg->nr;

	if (!start || start >= end || end <= w->from)
		return 1;
	w->end = start;
	hi = end < w->to ? end : w->to;
	lo = start > w->from ? start : w->from;
	if (hi <= lo)
		return 0;
	for (__u32 i = 0; i < WPROF_RAN_SLOTS && i < nr; i++) {
		struct wprof_ran_slot *sl = &seg->slots[i];

		if (sl->tid != w->key.tid || sl->pid != w->key.pid)
			others += sl->ns;
	}
	if (!others)
		return 0;
	/* the overlap's share of the others' time, in 1/2^20 (an overlap is < 2^44 ns) */
	share = hi - lo >= others ? 1ULL << 20 : ((hi - lo) << 20) / others;
	for (__u32 i = 0; i < WPROF_RAN_SLOTS && i < nr; i++) {
		struct wprof_ran_slot *sl = &seg->slots[i];

		if (sl->tid == w->key.tid && sl->pid == w->key.pid)
			continue;
		w->key.runner_pid = sl->pid;
		w->key.runner_tid = sl->tid;
		ran_add(w->ring, &w->key, sl->comm, (sl->ns * share) >> 20);
	}
	return 0;
}

/*
 * The wait [@from, @to] (the CPU's clock; @to its last switch) of the
 * thread (@pid, @tid, @start_id), which gets this CPU now: the runners of
 * the CPU's segments over it, and the part older than the oldest to
 * nobody. A global function: the verifier checks it once.
 */
__weak __noinline int ran_walk(__u32 pid, __u32 tid, __u32 start_id, __u64 from, __u64 to)
{
	struct ran_walk w = { .key = { .pid = pid, .tid = tid, .start_id = start_id },
			      .from = from, .to = to, .end = to };
	__u32 zero = 0;

	w.ring = bpf_map_lookup_elem(&ran_rings, &zero);
	if (!w.ring || from >= to)
		return 0;
	bpf_loop(WPROF_RAN_SEGS, ran_walk_seg, &w, 0);
	/* older than the CPU's oldest segment (or before its first): nobody named */
	if (w.end > from) {
		w.key.runner_pid = 0;
		w.key.runner_tid = WPROF_RAN_NOT_KNOWN;
		ran_add(w.ring, &w.key, NULL, w.end - from);
	}
	return 0;
}

/*
 * The thread of @th gets this CPU at @now (its switch's time) after an
 * off-CPU interval that @wake splits as close_interval() will: the window's
 * part of its wait for a CPU goes to whoever had this CPU meanwhile.
 */
static __always_inline void ran_wait(struct wprof_thread *th, __u64 now, __u64 wake)
{
	__u64 split, lo, hi, clk;
	struct wprof_ran_ring *ring;
	__u32 zero = 0;

	if (!ran_instead || th->off_state >= WPROF_STATE_CNT || !window_open())
		return;
	split = wprof_interval_split(th->off_since_ns, now, wake, th->off_state);
	if (!span(split, now))
		return;
	lo = clip(split);
	hi = clip(now);
	ring = bpf_map_lookup_elem(&ran_rings, &zero);
	if (!ring)
		return;
	/* this switch, the CPU's last: `now` on the CPU's clock */
	clk = ring->last;
	if (clk < now - lo)
		return;
	ran_walk(th->pid, th->tid, th->start_id, clk - (now - lo), clk - (now - hi));
}

#endif /* WPROF_RAN_BPF_H */
