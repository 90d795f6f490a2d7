/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPU limit of a target's cgroup: the cgroup of a process, or its
 * nearest ancestor, with a CFS quota (cgroup v1's cpu.cfs_quota_us, v2's
 * cpu.max), and its own count of periods and throttling (cpu.stat), read
 * as the window opens and as it closes.
 */
#ifndef WPROF_CGCPU_H
#define WPROF_CGCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct cg_stat {
	__u64 periods, throttled_periods, throttled_ns;
};

struct cg_limit {
	__u32 pid;
	char path[512];   /* the cgroup, as /proc/PID/cgroup names it (its hierarchy's root: "/") */
	char dir[800];    /* where its files are (not saved: this machine's) */
	__u64 quota_us, period_us;
	struct cg_stat start, end;
	bool v2;
	bool read_end;    /* end was read */
};

/* At most this many are kept (a recording's, a saved one's). */
#define CGCPU_MAX 64

/*
 * Whether @pid's cgroup, or an ancestor, has a CPU limit: 1 and @out filled
 * with the tightest of them (its start stat read now), or 0 (none, or
 * nothing could be read: the process or its cgroup's files are gone, the
 * cpu controller is mounted nowhere). What the process's files say is not
 * trusted: a path that is not a plain absolute one, or a number that does
 * not parse, is none.
 */
int cgcpu__find(__u32 pid, struct cg_limit *out);

/* Read @l's cpu.stat into @st: 0 or -errno (-EINVAL: it does not parse). */
int cgcpu__read(const struct cg_limit *l, struct cg_stat *st);

/*
 * The summary's lines of @l[0..@n): each limit, and the throttling over the
 * window by the cgroup's own count (those whose end was read).
 */
void cgcpu__summary(const struct cg_limit *l, size_t n, FILE *f);
/* The JSON report's "cgroups": [...], line (an empty list: none). */
void cgcpu__json(const struct cg_limit *l, size_t n, FILE *f);

#endif /* WPROF_CGCPU_H */
