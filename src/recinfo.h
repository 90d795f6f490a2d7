/* SPDX-License-Identifier: GPL-2.0-only */
/* What a recording was of, and when: for the titles and headers of the outputs. */
#ifndef WPROF_RECINFO_H
#define WPROF_RECINFO_H

#include <stddef.h>
#include <linux/types.h>

#include "opts.h"
#include "profile.h"

struct rec_info {
	char target[512]; /* "sleepburn -n 3", "pid 4242 (redis-server)", "every thread" */
	char program[256]; /* the command, or the first target's process name, or "" */
	__u64 start_ns;   /* when the window opened, ns since the epoch (CLOCK_REALTIME) */
	__u64 window_ns;
	__u64 period_ns;  /* of the on-CPU samples */
	__u64 freq_hz;
};

/*
 * Fill @ri from the options and the profile of a recording whose window
 * opened at @window_start_ns (CLOCK_MONOTONIC, as the session keeps it).
 */
void rec_info__fill(struct rec_info *ri, const struct record_opts *o, const struct profile *p,
		    __u64 window_start_ns);
/* "2026-01-31 14:05:09 CET": the start, local time. */
void rec_info__date(const struct rec_info *ri, char *buf, size_t size);

/*
 * The thread @tid of process @pid: of the threads a reused tid was, the
 * first of @pid (a line tells no more), or NULL.
 */
const struct thread_acct *rec_info__thread_of(const struct profile *p, __u32 pid, __u32 tid);

#endif /* WPROF_RECINFO_H */
