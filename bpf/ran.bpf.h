/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who ran instead (struct wprof_ran_key): while a target thread waited for a
 * CPU, which threads had the CPU it then got.
 *
 * Every switch of the machine, of targets or not, writes who gets the CPU
 * and from when into the CPU's ring of runs (ran_push(): a clock read, where
 * the switch has none of its own, and a few stores). Only a target that got
 * a CPU after a wait for it pays more: ran_wait() walks the ring back over
 * the wait and adds each runner's share to `ran`.
 *
 * The ring's times are the run queue's clock where runq_sched_info (the one
 * __schedule() read; the switch's own time is taken from it too), else
 * bpf_ktime_get_ns(). A wait, timed otherwise, is placed on the ring's clock
 * by its distance from the switch that ends it, which the ring has as its
 * newest run: no calibration between the two clocks is needed.
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

/*
 * A switch on this CPU from @prev to @next: @next's run starts. Returns the
 * time written, the run queue's clock where runq_sched_info (the caller
 * times the switch from it too: no second read). Interrupts are off: the
 * CPU's ring is ours alone.
 */
static __always_inline __u64 ran_push(struct task_struct *prev, struct task_struct *next,
				      bool typed)
{
	__u64 clk = runq_sched_info ? rq_clock_of(prev, typed) : bpf_ktime_get_ns();
	struct wprof_ran_ring *ring;
	struct wprof_ran_run *r;
	__u32 zero = 0;

	ring = bpf_map_lookup_elem(&ran_rings, &zero);
	if (!ring)
		return clk;
	r = &ring->runs[ring->head & (WPROF_RAN_RING - 1)];
	ring->head++;
	r->start = clk;
	r->pid = TASK_READ(next, tgid, typed);
	r->tid = TASK_READ(next, pid, typed);
	if (typed)
		__builtin_memcpy(r->comm, next->comm, sizeof(r->comm));
	else
		bpf_probe_read_kernel(r->comm, sizeof(r->comm), &next->comm);
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

/*
 * The wait [@from, @to] (the ring's clock) of the thread (@pid, @tid,
 * @start_id), which gets this CPU now: each run on the CPU meanwhile, newest
 * first, gives its overlap with the wait to its runner; consecutive runs of
 * one runner are added once. The thread's own runs are passed over. A
 * global function: the verifier checks its loop once.
 */
__weak __noinline int ran_walk(__u32 pid, __u32 tid, __u32 start_id, __u64 from, __u64 to)
{
	struct wprof_ran_key key = { .pid = pid, .tid = tid, .start_id = start_id };
	struct wprof_ran_ring *ring;
	const char *comm = NULL;
	__u64 end = to, ns = 0;
	__u32 zero = 0, head;

	ring = bpf_map_lookup_elem(&ran_rings, &zero);
	if (!ring || from >= to)
		return 0;
	head = ring->head;
	key.runner_tid = WPROF_RAN_NOT_KNOWN;
	for (__u32 k = 0; k < WPROF_RAN_RING && end > from; k++) {
		struct wprof_ran_run *r = &ring->runs[(head - 1 - k) & (WPROF_RAN_RING - 1)];
		__u64 start = r->start, lo, hi;

		if (!start)
			break;
		/* a run queue clock left stale by a wakeup can put a start after a later one */
		hi = end < to ? end : to;
		lo = start > from ? start : from;
		if (start < end)
			end = start;
		if (hi <= lo || (r->tid == tid && r->pid == pid))
			continue;
		if (r->tid != key.runner_tid || r->pid != key.runner_pid) {
			ran_add(ring, &key, comm, ns);
			key.runner_pid = r->pid;
			key.runner_tid = r->tid;
			comm = r->comm;
			ns = 0;
		}
		ns += hi - lo;
	}
	ran_add(ring, &key, comm, ns);
	/* older than the ring's oldest run (or before the CPU's first): nobody named */
	if (end > from) {
		key.runner_pid = 0;
		key.runner_tid = WPROF_RAN_NOT_KNOWN;
		ran_add(ring, &key, NULL, end - from);
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
	/* this switch, the ring's newest run: `now` on the ring's clock */
	clk = ring->runs[(ring->head - 1) & (WPROF_RAN_RING - 1)].start;
	if (clk < now - lo)
		return;
	ran_walk(th->pid, th->tid, th->start_id, clk - (now - lo), clk - (now - hi));
}

#endif /* WPROF_RAN_BPF_H */
