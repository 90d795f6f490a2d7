/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Each thread's exact time by slice of the window (--slice), by state: what
 * the BPF side sums per thread as it moves from slice to slice
 * (WPROF_KEY_TIME), and what user space adds for what is still open at the
 * window's end.
 */
#ifndef WPROF_THREADTIME_H
#define WPROF_THREADTIME_H

#include <stddef.h>
#include <linux/types.h>

#include "hmap.h"
#include "slices.h"
#include "wprof.h"

/* Time in slices [slice, slice + span), spread evenly over them. */
struct time_row {
	__u32 slice, span;
	__u64 ns[WPROF_STATE_CNT]; /* by enum wprof_state; runs (steal in them) as WPROF_ON_CPU */
};

struct thread_time {
	__u32 pid, tid, start_id;
	__u32 nr, cap;
	struct time_row *rows;
};

struct threadtimes {
	struct thread_time *t;
	size_t nr, cap;
	struct hmap by_id; /* (tid, start_id) -> index + 1 */
};

/* Add @ns[] to thread (@tid, @start_id) of @pid in slices [@slice, @slice + @span). 0 or -ENOMEM. */
int threadtimes__add(struct threadtimes *tt, __u32 pid, __u32 tid, __u32 start_id, __u32 slice,
		     __u32 span, const __u64 *ns);


/* Every thread's rows as slices twice as long. 0 or -ENOMEM (the table is unchanged then). */
int threadtimes__coarsen(struct threadtimes *tt);

/* slices__split() of @ns in @state, added to the thread. 0 or -ENOMEM. */
int threadtimes__add_part(struct threadtimes *tt, __u32 pid, __u32 tid, __u32 start_id,
			  __u64 slice_ns, __u32 state, __u64 from_ns, __u64 ns);

/* The thread's rows, or NULL. */
const struct thread_time *threadtimes__get(const struct threadtimes *tt, __u32 tid,
					   __u32 start_id);

/*
 * The thread's time by state in slices [@from, @to): whole slices of each
 * row, a row spread over several shared evenly (rounded down).
 */
void thread_time__sum(const struct thread_time *t, __u64 from, __u64 to,
		      __u64 ns[WPROF_STATE_CNT]);

void threadtimes__free(struct threadtimes *tt); /* the table emptied */

/* A thread's total in @state as time_edge() (bpf/thread.bpf.h) reads it: no steal. */
static inline __u64 thread_total(const struct wprof_thread *th, int state)
{
	return state == WPROF_ON_CPU ? th->on_ns : state == WPROF_STEAL ? 0 : th->off_ns[state];
}

/*
 * The time thread @th has in slice th->acc_slice that is in no key yet
 * (bpf/thread.bpf.h: time_edge()): its totals less their base. 0s: none.
 */
static inline void thread_time__last(const struct wprof_thread *th, __u64 ns[WPROF_STATE_CNT])
{
	for (int i = 0; i < WPROF_STATE_CNT; i++) {
		__u64 total = thread_total(th, i);

		ns[i] = th->acc_edge && total > th->acc_base[i] ? total - th->acc_base[i] : 0;
	}
}

/* Set @th's base so that thread_time__last() gives @ns (a thread's entry rebuilt). */
static inline void thread_time__set_last(struct wprof_thread *th, const __u64 ns[WPROF_STATE_CNT])
{
	th->acc_edge = 0;
	for (int i = 0; i < WPROF_STATE_CNT; i++) {
		__u64 total = thread_total(th, i);

		th->acc_base[i] = total - ns[i];
		th->acc_edge |= ns[i];
	}
}

#endif /* WPROF_THREADTIME_H */
