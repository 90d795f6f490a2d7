// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a built profile holds, read by the writers and wprof report: no BPF
 * session, no symbolizer (those are profile.c's, which builds it).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "profile.h"

bool profile__selects(const struct thread_acct *t, const char *thread_glob, const char *comm_glob,
		      bool no_idle_threads)
{
	return (!thread_glob || !fnmatch(thread_glob, t->comm, 0)) &&
	       (!comm_glob || !fnmatch(comm_glob, t->pcomm, 0)) &&
	       !(no_idle_threads && t->idle);
}

bool profile__asleep(const struct thread_acct *t)
{
	return t->selected && t->wall_ns && profile__busy_ns(t) * 1000 <= t->wall_ns;
}

__u64 profile__busy_ns(const struct thread_acct *t)
{
	return t->on_ns + t->off_ns[WPROF_OFF_RUNQ] + t->off_ns[WPROF_OFF_DISK];
}

const struct proc_hist *profile__hist(const struct profile *p, __u32 pid)
{
	for (size_t i = 0; i < p->nr_hists; i++)
		if (p->hists[i].pid == pid)
			return &p->hists[i];
	return NULL;
}

static int cmp_wall_desc(const void *a, const void *b)
{
	const struct thread_acct *x = a, *y = b;

	return x->wall_ns > y->wall_ns ? -1 : x->wall_ns < y->wall_ns;
}

size_t profile__processes(const struct profile *p, struct thread_acct **out)
{
	struct thread_acct *procs = calloc(p->nr_threads + 1, sizeof(*procs));
	struct hmap by_pid = {}; /* pid -> its row: -a sees thousands of processes */
	size_t nr = 0;

	*out = procs;
	if (!procs)
		return 0;
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct thread_acct *t = &p->threads[i];
		struct thread_acct *pr;
		void *old;

		if (!t->selected)
			continue;
		pr = hmap__get(&by_pid, t->pid, 0);
		if (!pr) {
			pr = &procs[nr];
			if (hmap__put(&by_pid, t->pid, 0, pr, &old)) {
				nr = 0;
				break;
			}
			nr++;
			pr->pid = pr->tid = t->pid;
			memcpy(pr->comm, t->pcomm, sizeof(pr->comm));
			pr->selected = true;
		}
		pr->on_ns += t->on_ns;
		pr->wall_ns += t->wall_ns;
		pr->on_us += t->on_us;
		pr->wall_us += t->wall_us;
		pr->samples += t->samples;
		pr->blocks += t->blocks;
		if (t->max_block_ns > pr->max_block_ns)
			pr->max_block_ns = t->max_block_ns;
		for (int k = 1; k < WPROF_STATE_CNT; k++) {
			pr->off_ns[k] += t->off_ns[k];
			pr->off_us[k] += t->off_us[k];
		}
	}
	hmap__clear(&by_pid);
	qsort(procs, nr, sizeof(*procs), cmp_wall_desc);
	return nr;
}

void profile__free(struct profile *p)
{
	free(p->threads);
	free(p->hists);
	origins__clear(&p->origins);
	memset(p, 0, sizeof(*p));
}
