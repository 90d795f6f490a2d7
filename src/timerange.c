// SPDX-License-Identifier: GPL-2.0-only
/*
 * wprof report --from/--to: a recording cut to a range of its window, as if
 * it had covered that range alone. Every line's time is kept by slice of
 * the window (folded pieces), each off-CPU interval split exactly at the
 * slice edges while recording: the lines and the threads' times of whole
 * slices are exact. On-CPU time in a slice is its samples' share, as over
 * the whole window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recline.h"
#include "timeline.h"

struct range_ctx {
	struct recording *r;
	struct folded *out;
	struct rec_splitter sp;
	__u32 from, to; /* slices [from, to) */
	struct folded_piece *buf;
	size_t cap;
	__u64 unplaced_us;
};

static __u64 overlap(const struct folded_piece *p, __u32 from, __u32 to)
{
	__u64 a = p->slice > from ? p->slice : from;
	__u64 b = (__u64)p->slice + p->span < to ? (__u64)p->slice + p->span : to;

	return b > a ? b - a : 0;
}

/* The thread of a line: of a reused tid, the first of its process (a line tells no more). */
static struct thread_acct *thread_of(struct profile *p, __u32 pid, __u32 tid)
{
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == tid && p->threads[i].pid == pid)
			return &p->threads[i];
	return NULL;
}

static void add_time(struct thread_acct *t, enum rec_kind kind, __u64 us, __u64 count, __u64 max)
{
	switch (kind) {
	case REC_ON_CPU:
		t->on_us += us;
		t->samples += count;
		return;
	case REC_STEAL:
		t->off_us[WPROF_STEAL] += us;
		return;
	case REC_RUNQ:
		t->off_us[WPROF_OFF_RUNQ] += us;
		return;
	case REC_DISK:
		t->off_us[WPROF_OFF_DISK] += us;
		break;
	default: /* sleep, and off-CPU time whose state was not kept (--no-states) */
		t->off_us[WPROF_OFF_SLEEP] += us;
		break;
	}
	t->blocks += count;
	if (max * 1000 > t->max_block_ns)
		t->max_block_ns = max * 1000;
}

/* A line's pieces in the range, moved to slices from 0; its time there, to its thread. */
static int range_line(const char *line, __u64 weight, __u64 count, __u64 max,
		      const struct folded_piece *p, size_t n, void *ctx)
{
	struct range_ctx *c = ctx;
	__u64 w = 0, cnt = 0, mx = 0, placed = 0;
	size_t k = 0;
	struct rec_line rl;
	struct thread_acct *t;

	if (rec_line__split(line, c->r->tag_leaf, c->r->ids, &rl))
		return -EINVAL;
	if (n > c->cap) {
		struct folded_piece *b = realloc(c->buf, n * sizeof(*b));

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		__u64 ov = p[i].span ? overlap(&p[i], c->from, c->to) : 0;
		__u64 last = (__u64)p[i].slice + p[i].span - 1;
		struct folded_piece *q = &c->buf[k];

		placed += p[i].span ? p[i].weight : 0;
		if (!ov)
			continue;
		*q = p[i];
		/* whole slices, the time spread evenly over them */
		q->weight = ov == p[i].span ? p[i].weight : p[i].weight * ov / p[i].span;
		q->slice = (p[i].slice > c->from ? p[i].slice : c->from) - c->from;
		q->span = ov;
		/* the intervals that ended in the range, and samples in it */
		if (last >= c->to)
			q->count = q->max = 0;
		w += q->weight;
		cnt += q->count;
		mx = q->max > mx ? q->max : mx;
		k++;
	}
	c->unplaced_us += weight > placed ? weight - placed : 0;
	if (!w && !cnt)
		return 0;
	t = c->r->ids ? thread_of(&c->r->prof, rl.pid, rl.tid) : NULL;
	if (t)
		add_time(t, rl.kind, w, cnt, mx);
	return rec_splitter__add_pieces(&c->sp, c->out, line, strlen(line), 0, 0, w, cnt, mx,
					c->buf, k);
}

/* Each thread's figures from its lines in the range; those not in it left out. */
static void finish_threads(struct profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr_threads; i++) {
		struct thread_acct *t = &p->threads[i];

		t->wall_us = t->on_us;
		t->on_ns = t->on_us * 1000;
		t->wall_ns = t->on_ns;
		for (int s = 1; s < WPROF_STATE_CNT; s++) {
			t->off_ns[s] = t->off_us[s] * 1000;
			t->kept_ns[s] = t->off_ns[s];
			t->wall_us += t->off_us[s];
			t->wall_ns += t->off_ns[s];
		}
		if (!t->wall_us && !t->samples)
			continue;
		t->idle = !t->on_us && !t->off_us[WPROF_STEAL] && !t->samples;
		p->threads[n++] = *t;
	}
	p->nr_threads = n;
}

/* The long blocks in the range, cut to it. */
static void range_blocks(struct recording *r, __u64 from_ns, __u64 to_ns)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_blocks; i++) {
		struct rec_block *b = &r->blocks[i];
		__u64 s = b->offset_ns, split = s + b->blocked_ns, e = split + b->runq_ns;

		if (e <= from_ns || s >= to_ns || e < s) {
			free(b->stack);
			free(b->waker);
			continue;
		}
		b->open |= e > to_ns;
		s = s > from_ns ? s : from_ns;
		e = e < to_ns ? e : to_ns;
		split = split < s ? s : split > e ? e : split;
		b->blocked_ns = split - s;
		b->runq_ns = e - split;
		b->offset_ns = s - from_ns;
		b->start_ns = r->info.start_ns + s;
		r->blocks[n++] = *b;
	}
	r->nr_blocks = n;
}

int timeline__range(struct recording *r, __u64 *from, __u64 *to, __u64 *unplaced_us)
{
	struct range_ctx c = { .r = r };
	struct profile *p = &r->prof;
	__u64 nr = recording__nr_slices(r), end, from_ns, to_ns;
	int err;

	if (!r->slice_ns || !nr)
		return -ENODATA;
	if (*from >= p->window_ns || *from >= *to)
		return -ERANGE;
	c.from = *from / r->slice_ns;
	end = (*to + r->slice_ns - 1) / r->slice_ns;
	c.to = end < nr ? end : nr;
	from_ns = (__u64)c.from * r->slice_ns;
	to_ns = (__u64)c.to * r->slice_ns;
	if (to_ns > p->window_ns)
		to_ns = p->window_ns;
	*from = from_ns;
	*to = to_ns;
	c.out = folded__new();
	if (!c.out)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_threads; i++) {
		struct thread_acct *t = &p->threads[i];

		t->on_us = t->samples = t->blocks = t->max_block_ns = 0;
		memset(t->off_us, 0, sizeof(t->off_us));
	}
	err = folded__for_each_pieces(r->lines, range_line, &c);
	rec_splitter__free(&c.sp);
	free(c.buf);
	if (err) {
		folded__free(c.out);
		return err;
	}
	folded__free(r->lines);
	r->lines = c.out;
	finish_threads(p);
	/* not known by slice: left out rather than shown for the whole window */
	p->nr_hists = 0;
	p->unsampled_threads = p->unsampled_us = p->untimed_threads = 0;
	range_blocks(r, from_ns, to_ns);
	r->info.start_ns += from_ns;
	r->info.window_ns = p->window_ns = to_ns - from_ns;
	*unplaced_us = c.unplaced_us;
	return 0;
}
