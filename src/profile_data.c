// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a built profile holds, read by the writers and wprof report, and the
 * rows let go while recording: no BPF session, no symbolizer (those are the
 * builder's: profile.c, profile_weigh.c, profile_names.c).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
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
	return t->on_ns + t->off_ns[WPROF_STEAL] + t->off_ns[WPROF_OFF_RUNQ] +
	       t->off_ns[WPROF_OFF_THROTTLED] + t->off_ns[WPROF_OFF_DISK];
}

bool profile__ran_unsampled(const struct thread_acct *t)
{
	return (t->on_us || t->off_us[WPROF_STEAL]) && !t->samples;
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

size_t profile__threads_shown(const struct profile *p)
{
	return p->nr_threads + p->dropped_threads + p->dropped_left_out - p->threads_left_out;
}

/* Tids are below PID_MAX_LIMIT (4M on 64-bit): a bitmap of 512 KiB at most, touched sparsely. */
#define TID_BITS (4u << 20)

bool profile__dropped(const struct profile *p, __u32 tid, __u32 start_id)
{
	return hmap__get(&p->dropped_ids, tid, start_id) ||
	       hmap__get(&p->dropped_ids_prev, tid, start_id);
}

void profile__note_tid(struct profile *p, __u32 tid)
{
	if (!p->orphan_tids || tid >= TID_BITS || !(p->orphan_tids[tid / 8] >> (tid % 8) & 1))
		return;
	p->orphan_tids[tid / 8] &= ~(1 << (tid % 8));
	p->dropped_reused++;
}

const struct thread_acct *profile__thread(const struct profile *p, __u32 tid)
{
	size_t lo = 0, hi = p->nr_threads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->threads[mid].tid == tid)
			return &p->threads[mid];
		if (p->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Rows of the tid of the row before them (@p's rows are sorted by tid). */
static size_t same_tid_pairs(const struct profile *p)
{
	size_t n = 0;

	for (size_t i = 1; i < p->nr_threads; i++)
		n += p->threads[i].tid == p->threads[i - 1].tid;
	return n;
}

size_t profile__reused_tids(const struct profile *p)
{
	return same_tid_pairs(p) + p->dropped_reused;
}

/* An ended process, a candidate to have its rows let go. */
struct ended_proc {
	__u32 pid;
	bool shown; /* has a selected thread */
	bool keep;
	__u64 busy_ns, wall_ns; /* of its selected threads: how the summary ranks it */
};

/* Shown before not shown, then as the summary ranks processes: busy, then wall time. */
static int cmp_ended(const void *a, const void *b)
{
	const struct ended_proc *x = a, *y = b;

	if (x->shown != y->shown)
		return x->shown ? -1 : 1;
	if (x->busy_ns != y->busy_ns)
		return x->busy_ns > y->busy_ns ? -1 : 1;
	return x->wall_ns > y->wall_ns ? -1 : x->wall_ns < y->wall_ns;
}

/* A row -p or -t names: the recording's title needs it to the end. */
static bool named_target(const struct record_opts *o, const struct thread_acct *t)
{
	for (size_t i = 0; i < o->nr_ids; i++)
		if (o->ids[i] == (o->filter == WPROF_FILTER_TID ? t->tid : t->pid))
			return true;
	return false;
}

/* The ended processes among @p's rows into *@out (caller frees), by pid in @at. */
static long ended_procs(const struct profile *p, const struct record_opts *o,
			const struct hmap *busy, struct hmap *at, struct ended_proc **out)
{
	struct ended_proc *procs = NULL;
	size_t nr = 0, cap = 0;

	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct thread_acct *t = &p->threads[i];
		uintptr_t k;
		void *old;

		if (!t->retired || hmap__get(busy, t->pid, 0) || named_target(o, t))
			continue;
		k = (uintptr_t)hmap__get(at, t->pid, 0);
		if (!k) {
			if (nr == cap) {
				struct ended_proc *n = realloc(procs, (cap = cap ? 2 * cap : 64) *
								      sizeof(*n));

				if (!n)
					goto nomem;
				procs = n;
			}
			if (hmap__put(at, t->pid, 0, (void *)(uintptr_t)(nr + 1), &old))
				goto nomem;
			procs[nr] = (struct ended_proc){ .pid = t->pid };
			k = ++nr;
		}
		if (t->selected) {
			procs[k - 1].shown = true;
			procs[k - 1].busy_ns += profile__busy_ns(t);
			procs[k - 1].wall_ns += t->wall_ns;
		}
	}
	*out = procs;
	return nr;
nomem:
	free(procs);
	return -ENOMEM;
}

/*
 * The rows of ended processes but the PROFILE_TOP_PROCS busiest go. The
 * summary's busiest processes stay exact: a process let go had that many
 * ended ones above it, which stay (an ended process's rows no longer change),
 * and the live ones are all there. (A pid reused after its rows went is
 * another process to the summary, where rows of one pid would have been
 * summed as one: they were two.) The threads let go are remembered for two
 * compactions, which is longer than a key of theirs can be late (see
 * add_count() in profile.c), and the tids left with no row in a bitmap of a
 * bounded size, for the count of reused tids.
 */
long profile__compact(struct profile *p, const struct record_opts *o, const struct hmap *busy,
		      struct hmap *gone)
{
	struct hmap at = {}, ids = {}; /* pid -> its ended_proc; the threads let go */
	struct ended_proc *procs = NULL;
	size_t n = 0, pairs;
	long nr, ret = 0;
	void *old;

	if (opts__thread_rows(o))
		return 0;
	nr = ended_procs(p, o, busy, &at, &procs);
	if (nr <= PROFILE_TOP_PROCS) {
		ret = nr < 0 ? nr : 0;
		goto out;
	}
	if (!p->orphan_tids && !(p->orphan_tids = calloc(TID_BITS / 8, 1))) {
		ret = -ENOMEM;
		goto out;
	}
	qsort(procs, nr, sizeof(*procs), cmp_ended);
	/* sorted: at's indexes are stale, it maps to the entries themselves now */
	hmap__clear(&at);
	for (long i = 0; i < nr; i++) {
		procs[i].keep = i < PROFILE_TOP_PROCS;
		if (hmap__put(&at, procs[i].pid, 0, &procs[i], &old) ||
		    (!procs[i].keep && gone && hmap__put(gone, procs[i].pid, 0, (void *)1, &old))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct thread_acct *t = &p->threads[i];
		const struct ended_proc *e = hmap__get(&at, t->pid, 0);

		/* at has only ended processes (no thread of theirs is alive) */
		p->threads[i].dropped = e && !e->keep && t->retired && !named_target(o, t);
		if (p->threads[i].dropped &&
		    hmap__put(&ids, t->tid, t->start_id, (void *)1, &old)) {
			ret = -ENOMEM;
			goto out;
		}
	}
	/* nothing fails from here: the counters and the rows change together */
	for (long i = PROFILE_TOP_PROCS; i < nr; i++)
		p->dropped_procs += procs[i].shown;
	pairs = same_tid_pairs(p);
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct thread_acct *t = &p->threads[i];

		if (!t->dropped) {
			p->threads[n++] = *t; /* the order, by tid, stays */
			continue;
		}
		ret++;
		if (t->selected)
			p->dropped_threads++;
		else
			p->dropped_left_out++;
		p->dropped_on_ns += t->on_ns;
	}
	p->nr_threads = n;
	p->dropped_reused += pairs - same_tid_pairs(p);
	for (size_t i = 0; i < ids.cap; i++) {
		__u32 tid = ids.slots[i].k1;

		if (ids.slots[i].val && tid < TID_BITS && !profile__thread(p, tid))
			p->orphan_tids[tid / 8] |= 1 << (tid % 8);
	}
	hmap__clear(&p->dropped_ids_prev);
	p->dropped_ids_prev = p->dropped_ids;
	p->dropped_ids = ids;
	ids = (struct hmap){};
out:
	for (size_t i = 0; i < p->nr_threads; i++)
		p->threads[i].dropped = false;
	hmap__clear(&ids);
	hmap__clear(&at);
	free(procs);
	return ret;
}

void profile__free(struct profile *p)
{
	free(p->orphan_tids);
	hmap__clear(&p->dropped_ids);
	hmap__clear(&p->dropped_ids_prev);
	free(p->threads);
	free(p->hists);
	origins__clear(&p->origins);
	threadtimes__free(&p->times);
	memset(p, 0, sizeof(*p));
}
