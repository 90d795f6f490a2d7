/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who ran instead: for each thread's wait for a CPU, the threads that had
 * the CPU it then got, time-weighted (bpf/ran.bpf.h measures it). Kept in a
 * recording as a flat list; written per thread in `-f json` (ran_instead)
 * and `-f threads` (RAN_INSTEAD).
 */
#ifndef WPROF_RANINST_H
#define WPROF_RANINST_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "wprof.h"

struct recording;
struct thread_acct;

/* The runners named in JSON (the rest summed as "[others]"), and in the table */
#define RAN_TOP_JSON 8
#define RAN_TOP_TABLE 3
/* room for that column: RAN_TOP_TABLE names as safe text, tids, shares */
#define RAN_COLUMN_SIZE (RAN_TOP_TABLE * (4 * WPROF_COMM_LEN + 24) + 2)

struct ran_entry {
	__u32 pid, tid, start_id;     /* the thread that waited */
	__u32 runner_pid, runner_tid; /* the one that ran; WPROF_RAN_NOT_KNOWN: nobody named */
	char comm[WPROF_COMM_LEN];    /* the runner's name (NUL-terminated) */
	__u64 ns;
};

/*
 * Sort @e (@nr) as the writers look them up: by waiting thread (tid,
 * start_id), then by ns, most first; entries of the same waiting thread and
 * runner are added into one first (the first's name kept). The entries left.
 */
size_t raninst__sort(struct ran_entry *e, size_t nr);

/*
 * `, "ran_instead": [...]` for @t: its runners, RAN_TOP_JSON at most, then
 * "[others]" and "[not known]" (what its runqueue_us has that no runner was
 * named for), so that the entries' us add up to its runqueue_us. Nothing
 * when @r has no such list.
 */
void raninst__json(const struct recording *r, const struct thread_acct *t, FILE *f);

/*
 * @t's RAN_TOP_TABLE first runners as one whitespace-free column,
 * "comm/tid:52%,comm/tid:40%" (shares of its runqueue time), or "-".
 */
void raninst__column(const struct recording *r, const struct thread_acct *t, char *buf,
		     size_t size);

/*
 * The summary's line under process @pid, whose selected threads waited
 * @runq_ns for a CPU of their @busy_ns: who had the CPU meanwhile, by
 * process (its own threads, or the runner's name and pid), the first three
 * as shares of @runq_ns. Only where the wait is a tenth of @busy_ns or more,
 * and someone was named.
 */
void raninst__summary(const struct recording *r, __u32 pid, __u64 runq_ns, __u64 busy_ns,
		      FILE *f);

#endif /* WPROF_RANINST_H */
