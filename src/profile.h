/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_PROFILE_H
#define WPROF_PROFILE_H

#include <stdio.h>

#include "folded.h"
#include "opts.h"
#include "session.h"
#include "symbolize.h"

/* Per-thread accounting over the window, exact from the scheduler events. */
struct thread_acct {
	__u32 pid, tid;
	char comm[WPROF_COMM_LEN];
	__u64 wall_ns;                  /* time it existed inside the window */
	__u64 on_ns;                    /* exact on-CPU time */
	__u64 off_ns[WPROF_STATE_CNT];  /* by state; [WPROF_ON_CPU] unused */
	__u64 samples;
	__u64 blocks;
};

struct profile {
	struct thread_acct *threads; /* sorted by tid */
	size_t nr_threads;
	__u64 window_ns;
	__u64 period_ns;
	__u64 frames_total, frames_unnamed;
	__u64 frames_bogus; /* outermost user frames in no mapping, dropped */
	__u64 stacks_missing; /* stack ids not found in the stack map */
};

/*
 * Read the detached session's maps, close the intervals still open at the
 * window's end, symbolize, and add every stack to `out`.
 */
int profile__build(struct profile *p, struct session *s, struct symbolizer *sym,
		   const struct record_opts *o, struct folded *out);
/* Per process sums (named after the main thread), by wall time; caller frees. */
size_t profile__processes(const struct profile *p, struct thread_acct **out);
void profile__print_summary(const struct profile *p, struct session *s, FILE *f);
void profile__free(struct profile *p);

#endif /* WPROF_PROFILE_H */
