// SPDX-License-Identifier: GPL-2.0-only
/* Each thread's exact time by slice: see threadtime.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "threadtime.h"

static struct thread_time *thread_of(struct threadtimes *tt, __u32 pid, __u32 tid,
				     __u32 start_id)
{
	void *v = hmap__get(&tt->by_id, tid, start_id), *old;
	struct thread_time *t;

	if (v)
		return &tt->t[(size_t)v - 1];
	if (tt->nr == tt->cap) {
		size_t cap = tt->cap ? 2 * tt->cap : 64;

		t = realloc(tt->t, cap * sizeof(*t));
		if (!t)
			return NULL;
		tt->t = t;
		tt->cap = cap;
	}
	if (hmap__put(&tt->by_id, tid, start_id, (void *)(tt->nr + 1), &old))
		return NULL;
	t = &tt->t[tt->nr++];
	*t = (struct thread_time){ .pid = pid, .tid = tid, .start_id = start_id };
	return t;
}

int threadtimes__add(struct threadtimes *tt, __u32 pid, __u32 tid, __u32 start_id, __u32 slice,
		     __u32 span, const __u64 *ns)
{
	struct thread_time *t;
	struct time_row *r;
	__u64 sum = 0;

	for (int i = 0; i < WPROF_STATE_CNT; i++)
		sum |= ns[i];
	if (!sum || !span)
		return 0;
	t = thread_of(tt, pid, tid, start_id);
	if (!t)
		return -ENOMEM;
	r = t->nr ? &t->rows[t->nr - 1] : NULL;
	if (!r || r->slice != slice || r->span != span) {
		if (t->nr == t->cap) {
			__u32 cap = t->cap ? 2 * t->cap : 1;

			r = realloc(t->rows, (size_t)cap * sizeof(*r));
			if (!r)
				return -ENOMEM;
			t->rows = r;
			t->cap = cap;
		}
		r = &t->rows[t->nr++];
		*r = (struct time_row){ .slice = slice, .span = span };
	}
	for (int i = 0; i < WPROF_STATE_CNT; i++)
		r->ns[i] += ns[i];
	return 0;
}



static int cmp_row(const void *a, const void *b)
{
	const struct time_row *x = a, *y = b;

	return slices__cmp(x->slice, x->span, y->slice, y->span);
}

/* Sort @t's rows and merge those of the same slices (rows come in any order: a drain's). */
static void compact_rows(struct thread_time *t)
{
	__u32 n = 0;

	qsort(t->rows, t->nr, sizeof(*t->rows), cmp_row);
	for (__u32 i = 0; i < t->nr; i++) {
		if (n && !cmp_row(&t->rows[n - 1], &t->rows[i])) {
			for (int s = 0; s < WPROF_STATE_CNT; s++)
				t->rows[n - 1].ns[s] += t->rows[i].ns[s];
			continue;
		}
		t->rows[n++] = t->rows[i];
	}
	t->nr = n;
}

/* @t's rows as slices twice as long, those of the same slices merged, in @out. */
static int coarsen_rows(const struct thread_time *t, struct thread_time *out)
{
	*out = (struct thread_time){ .pid = t->pid, .tid = t->tid, .start_id = t->start_id };
	for (__u32 i = 0; i < t->nr; i++) {
		const struct time_row *r = &t->rows[i];
		struct slice_part parts[3];
		__u64 left[WPROF_STATE_CNT];
		int n = slices__coarsen(r->slice, r->span, 1, parts);

		memcpy(left, r->ns, sizeof(left));
		for (int j = 0; j < n; j++) {
			struct time_row *to = out->nr ? &out->rows[out->nr - 1] : NULL;

			if (!to || to->slice != parts[j].slice || to->span != parts[j].span) {
				if (out->nr == out->cap) {
					__u32 c = out->cap ? 2 * out->cap : t->nr;
					struct time_row *a = realloc(out->rows, (size_t)c * sizeof(*a));

					if (!a)
						return -ENOMEM;
					out->rows = a;
					out->cap = c;
				}
				to = &out->rows[out->nr++];
				*to = (struct time_row){ .slice = parts[j].slice, .span = parts[j].span };
			}
			for (int s = 0; s < WPROF_STATE_CNT; s++)
				to->ns[s] += slices__share(r->ns[s], &parts[j], r->span, &left[s],
							   j == n - 1);
		}
	}
	if (out->nr > 1)
		compact_rows(out);
	return 0;
}

int threadtimes__coarsen(struct threadtimes *tt)
{
	struct thread_time *t = tt->cap ? calloc(tt->cap, sizeof(*t)) : NULL;
	int err = 0;

	if (tt->cap && !t)
		return -ENOMEM;
	/* all made before any is replaced: on failure the table is as it was */
	for (size_t i = 0; i < tt->nr && !err; i++)
		err = coarsen_rows(&tt->t[i], &t[i]);
	for (size_t i = 0; i < tt->nr; i++)
		free(err ? t[i].rows : tt->t[i].rows);
	if (err) {
		free(t);
		return err;
	}
	free(tt->t);
	tt->t = t;
	return 0;
}

int threadtimes__add_part(struct threadtimes *tt, __u32 pid, __u32 tid, __u32 start_id,
			  __u64 slice_ns, __u32 state, __u64 from_ns, __u64 ns)
{
	struct slice_part parts[3];
	int n, err = 0;

	if (!slice_ns || !ns || state >= WPROF_STATE_CNT)
		return 0;
	n = slices__split(slice_ns, from_ns, ns, parts);
	for (int i = 0; i < n && !err; i++) {
		__u64 v[WPROF_STATE_CNT] = {};

		v[state] = parts[i].ns;
		err = threadtimes__add(tt, pid, tid, start_id, parts[i].slice, parts[i].span, v);
	}
	return err;
}

const struct thread_time *threadtimes__get(const struct threadtimes *tt, __u32 tid,
					   __u32 start_id)
{
	void *v = hmap__get(&tt->by_id, tid, start_id);

	return v ? &tt->t[(size_t)v - 1] : NULL;
}

void thread_time__sum(const struct thread_time *t, __u64 from, __u64 to,
		      __u64 ns[WPROF_STATE_CNT])
{
	memset(ns, 0, WPROF_STATE_CNT * sizeof(*ns));
	for (__u32 i = 0; t && i < t->nr; i++) {
		const struct time_row *r = &t->rows[i];
		__u64 a = r->slice > from ? r->slice : from;
		__u64 b = (__u64)r->slice + r->span < to ? (__u64)r->slice + r->span : to;

		if (b <= a)
			continue;
		for (int s = 0; s < WPROF_STATE_CNT; s++)
			ns[s] += b - a == r->span ? r->ns[s] : r->ns[s] / r->span * (b - a);
	}
}

void threadtimes__free(struct threadtimes *tt)
{
	for (size_t i = 0; i < tt->nr; i++)
		free(tt->t[i].rows);
	free(tt->t);
	hmap__clear(&tt->by_id);
	memset(tt, 0, sizeof(*tt));
}
