// SPDX-License-Identifier: GPL-2.0-only
/*
 * wprof report --from/--to: a recording cut to a range of its window, as if
 * it had covered that range alone. Each thread's exact time by slice (its
 * runs and off-CPU parts split at slice edges in the kernel) gives its
 * times in the range; every line's time is kept by slice too (folded
 * pieces), and a thread's lines in a state are weighed to its exact time
 * there, as over the whole window: on-CPU lines by their samples in the
 * range, off-CPU lines by their time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recline.h"
#include "timeline.h"
#include "util.h"

/* A line's part in the range, kept until its thread's lines are weighed together. */
struct part {
	char *line;
	__u32 pid, tid;
	enum rec_kind kind;
	__u64 w, count, max; /* its time in the range (weighed later), what ended there */
	struct folded_piece *p;
	size_t n;
};

struct range_ctx {
	struct recording *r;
	__u32 from, to; /* slices [from, to) */
	__u64 range_us;
	struct part *parts;
	size_t nr, cap;
	__u64 unplaced_us;
};

static __u64 overlap(__u64 slice, __u64 span, __u64 from, __u64 to)
{
	__u64 a = slice > from ? slice : from, b = slice + span < to ? slice + span : to;

	return b > a ? b - a : 0;
}

/* A line's pieces in the range, moved to slices from 0. */
static int range_line(const char *line, __u64 weight, __u64 count, __u64 max,
		      const struct folded_piece *p, size_t n, void *ctx)
{
	struct range_ctx *c = ctx;
	__u64 placed = 0;
	struct rec_line rl;
	struct part *pt;

	if (rec_line__split(line, c->r->tag_leaf, c->r->ids, &rl))
		return -EINVAL;
	if (c->nr == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;

		pt = realloc(c->parts, cap * sizeof(*pt));
		if (!pt)
			return -ENOMEM;
		c->parts = pt;
		c->cap = cap;
	}
	pt = &c->parts[c->nr];
	*pt = (struct part){ .pid = rl.pid, .tid = rl.tid, .kind = rl.kind };
	pt->p = calloc(n + 1, sizeof(*pt->p));
	if (!pt->p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		__u64 ov = p[i].span ? overlap(p[i].slice, p[i].span, c->from, c->to) : 0;
		struct folded_piece *q = &pt->p[pt->n];

		placed += p[i].span ? p[i].weight : 0;
		if (!ov)
			continue;
		*q = p[i];
		q->weight = ov == p[i].span ? p[i].weight : p[i].weight * ov / p[i].span;
		q->slice = (p[i].slice > c->from ? p[i].slice : c->from) - c->from;
		q->span = ov;
		/* what ended in the range: the intervals, and the samples; at most the range long */
		if ((__u64)p[i].slice + p[i].span > c->to)
			q->count = q->max = 0;
		if (q->max > c->range_us)
			q->max = c->range_us;
		pt->w += q->weight;
		pt->count += q->count;
		pt->max = q->max > pt->max ? q->max : pt->max;
		pt->n++;
	}
	c->unplaced_us += weight > placed ? weight - placed : 0;
	if (!pt->w && !pt->count) {
		free(pt->p);
		return 0;
	}
	pt->line = strdup(line);
	if (!pt->line) {
		free(pt->p);
		return -ENOMEM;
	}
	c->nr++;
	return 0;
}

static int cmp_part(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* The thread of a line: of a reused tid, the first of its process (a line tells no more). */
static struct thread_acct *thread_of(struct profile *p, __u32 pid, __u32 tid)
{
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == tid && p->threads[i].pid == pid)
			return &p->threads[i];
	return NULL;
}

/* A thread's exact time in the range, us, by enum wprof_state (steal: its lines'). */
static void thread_range(const struct range_ctx *c, struct thread_acct *t, __u64 steal_us)
{
	const struct thread_time *tm = threadtimes__get(&c->r->prof.times, t->tid, t->start_id);
	__u64 ns[WPROF_STATE_CNT], us[WPROF_STATE_CNT];

	thread_time__sum(tm, c->from, c->to, ns);
	/* rounded so that they add up to their sum rounded: no more than the range */
	if (round_ns_to_us(ns, WPROF_STATE_CNT, us))
		for (int s = 0; s < WPROF_STATE_CNT; s++)
			us[s] = ns[s] / 1000;
	if (steal_us > us[WPROF_ON_CPU])
		steal_us = us[WPROF_ON_CPU];
	t->on_us = us[WPROF_ON_CPU] - steal_us;
	t->off_us[WPROF_STEAL] = steal_us;
	for (int s = WPROF_OFF_SLEEP; s < WPROF_STATE_CNT; s++)
		if (s != WPROF_STEAL)
			t->off_us[s] = us[s];
}

/* The exact time of kind @k of thread @t in the range (set by thread_range()). */
static __u64 kind_total(const struct thread_acct *t, enum rec_kind k)
{
	switch (k) {
	case REC_ON_CPU:
		return t->on_us;
	case REC_SLEEP:
		return t->off_us[WPROF_OFF_SLEEP];
	case REC_DISK:
		return t->off_us[WPROF_OFF_DISK];
	case REC_RUNQ:
		return t->off_us[WPROF_OFF_RUNQ];
	case REC_THROTTLED:
		return t->off_us[WPROF_OFF_THROTTLED];
	case REC_OFF:
		return t->off_us[WPROF_OFF_SLEEP] + t->off_us[WPROF_OFF_DISK] +
		       t->off_us[WPROF_OFF_RUNQ] + t->off_us[WPROF_OFF_THROTTLED];
	default:
		return 0;
	}
}

/* Weigh @n parts, one thread's lines of one kind, to @total us: on-CPU by samples, else by time. */
static int weigh(struct part *pt, size_t n, __u64 total)
{
	__u64 *shares = malloc((n + 1) * sizeof(*shares)), *parts = malloc((n + 1) * sizeof(*parts));
	__u64 sum = 0;
	int err = !shares || !parts ? -ENOMEM : 0;

	for (size_t i = 0; i < n && !err; i++)
		sum += shares[i] = pt[i].kind == REC_ON_CPU ? pt[i].count : pt[i].w;
	/* no sample in the range: by the time the lines had */
	for (size_t i = 0; i < n && !err && !sum; i++)
		shares[i] = pt[i].w;
	if (!err)
		err = apportion(total, shares, n, parts);
	for (size_t i = 0; i < n && !err; i++) {
		__u64 *pw = malloc((pt[i].n + 1) * sizeof(*pw)), *out = malloc((pt[i].n + 1) * 8);

		for (size_t k = 0; pw && k < pt[i].n; k++)
			pw[k] = pt[i].p[k].weight;
		err = !pw || !out ? -ENOMEM : apportion(parts[i], pw, pt[i].n, out);
		for (size_t k = 0; !err && k < pt[i].n; k++)
			pt[i].p[k].weight = out[k];
		pt[i].w = parts[i];
		free(pw);
		free(out);
	}
	free(shares);
	free(parts);
	return err;
}

/* Steal lines' time of one thread (parts [i, j) of it). */
static __u64 steal_of(const struct part *pt, size_t n)
{
	__u64 us = 0;

	for (size_t i = 0; i < n; i++)
		us += pt[i].kind == REC_STEAL ? pt[i].w : 0;
	return us;
}

/* Weigh the parts by thread and kind, to the threads' exact times in the range. */
static int weigh_parts(struct range_ctx *c)
{
	struct profile *p = &c->r->prof;
	int err = 0;

	if (c->nr)
		qsort(c->parts, c->nr, sizeof(*c->parts), cmp_part);
	for (size_t i = 0, j; i < c->nr && !err; i = j) {
		struct thread_acct *t = thread_of(p, c->parts[i].pid, c->parts[i].tid);

		for (j = i; j < c->nr && c->parts[j].pid == c->parts[i].pid &&
			    c->parts[j].tid == c->parts[i].tid; j++)
			;
		if (!t || !threadtimes__get(&p->times, t->tid, t->start_id))
			continue; /* no exact times: the lines' own */
		thread_range(c, t, steal_of(&c->parts[i], j - i));
		t->retired = true; /* marks a thread with lines here */
		for (size_t k = i, m; k < j && !err; k = m) {
			for (m = k; m < j && c->parts[m].kind == c->parts[k].kind; m++)
				;
			if (c->parts[k].kind != REC_STEAL && c->parts[k].kind != REC_OTHER)
				err = weigh(&c->parts[k], m - k, kind_total(t, c->parts[k].kind));
		}
	}
	return err;
}

/*
 * A line's counts to its thread, and its time where the thread has no
 * exact times (seen only in samples): the lines' own.
 */
static void add_time(struct thread_acct *t, const struct part *pt, bool exact)
{
	static const int state[REC_KIND_CNT] = {
		[REC_ON_CPU] = WPROF_ON_CPU, [REC_SLEEP] = WPROF_OFF_SLEEP,
		[REC_DISK] = WPROF_OFF_DISK, [REC_RUNQ] = WPROF_OFF_RUNQ,
		[REC_OFF] = WPROF_OFF_SLEEP, [REC_STEAL] = WPROF_STEAL,
		[REC_THROTTLED] = WPROF_OFF_THROTTLED, [REC_OTHER] = -1,
	};
	int s = state[pt->kind];

	if (s < 0)
		return;
	if (!exact && s == WPROF_ON_CPU)
		t->on_us += pt->w;
	else if (!exact)
		t->off_us[s] += pt->w;
	if (s == WPROF_ON_CPU) {
		t->samples += pt->count;
	} else if (s == WPROF_OFF_SLEEP || s == WPROF_OFF_DISK) {
		t->blocks += pt->count;
		if (pt->max * 1000 > t->max_block_ns)
			t->max_block_ns = pt->max * 1000;
	}
}

/* The threads' figures in the range; those without time in it left out. */
static void finish_threads(struct range_ctx *c)
{
	struct profile *p = &c->r->prof;
	size_t n = 0;

	for (size_t i = 0; i < p->nr_threads; i++) {
		struct thread_acct *t = &p->threads[i];

		/* a thread with exact times but no line in the range (asleep, unwalked) */
		if (!t->retired && threadtimes__get(&p->times, t->tid, t->start_id))
			thread_range(c, t, 0);
		t->retired = false;
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

/* The weighed parts as the new lines; the threads' counts from them. */
static int make_lines(struct range_ctx *c, struct folded *out)
{
	struct rec_splitter sp = {};
	int err = 0;

	for (size_t i = 0; i < c->nr && !err; i++) {
		struct part *pt = &c->parts[i];
		struct thread_acct *t = c->r->ids ? thread_of(&c->r->prof, pt->pid, pt->tid) : NULL;

		if (!pt->w && !pt->count)
			continue;
		if (t)
			add_time(t, pt, threadtimes__get(&c->r->prof.times, t->tid, t->start_id));
		err = rec_splitter__add_pieces(&sp, out, pt->line, strlen(pt->line), 0, 0, pt->w,
					       pt->count, pt->max, pt->p, pt->n);
	}
	rec_splitter__free(&sp);
	return err;
}

/* Each thread's time by slice in the range, its slices from 0. 0 or -ENOMEM. */
static int range_times(struct threadtimes *tt, __u32 from, __u32 to)
{
	struct threadtimes out = {};
	int err = 0;

	for (size_t i = 0; i < tt->nr && !err; i++) {
		const struct thread_time *t = &tt->t[i];

		for (__u32 k = 0; k < t->nr && !err; k++) {
			const struct time_row *row = &t->rows[k];
			__u64 ov = overlap(row->slice, row->span, from, to), ns[WPROF_STATE_CNT];

			if (!ov)
				continue;
			for (int st = 0; st < WPROF_STATE_CNT; st++)
				ns[st] = ov == row->span ? row->ns[st] : row->ns[st] / row->span * ov;
			err = threadtimes__add(&out, t->pid, t->tid, t->start_id,
					       (row->slice > from ? row->slice : from) - from, ov, ns);
		}
	}
	if (err) {
		threadtimes__free(&out);
		return err;
	}
	threadtimes__free(tt);
	*tt = out;
	return 0;
}

int timeline__range(struct recording *r, __u64 *from, __u64 *to, __u64 *unplaced_us)
{
	struct range_ctx c = { .r = r };
	struct profile *p = &r->prof;
	__u64 nr = recording__nr_slices(r), end, from_ns, to_ns;
	struct folded *out;
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
	c.range_us = (to_ns - from_ns) / 1000;
	for (size_t i = 0; i < p->nr_threads; i++) {
		struct thread_acct *t = &p->threads[i];

		t->on_us = t->samples = t->blocks = t->max_block_ns = 0;
		memset(t->off_us, 0, sizeof(t->off_us));
		t->retired = false;
	}
	out = folded__new();
	err = out ? folded__for_each_pieces(r->lines, range_line, &c) : -ENOMEM;
	if (!err)
		err = weigh_parts(&c);
	if (!err)
		err = make_lines(&c, out);
	for (size_t i = 0; i < c.nr; i++) {
		free(c.parts[i].line);
		free(c.parts[i].p);
	}
	free(c.parts);
	if (err) {
		folded__free(out);
		return err;
	}
	folded__free(r->lines);
	r->lines = out;
	finish_threads(&c);
	err = range_times(&p->times, c.from, c.to);
	if (err)
		return err;
	/* not known by slice: left out rather than shown for the whole window */
	p->nr_hists = 0;
	p->unsampled_threads = p->unsampled_us = p->untimed_threads = 0;
	range_blocks(r, from_ns, to_ns);
	/* their cpu.stat was read at the window's ends only */
	r->nr_cgroups = 0;
	/* who ran instead is summed over the whole window */
	r->nr_ran = 0;
	r->ran_recorded = false;
	r->info.start_ns += from_ns;
	r->info.window_ns = p->window_ns = to_ns - from_ns;
	*unplaced_us = c.unplaced_us;
	return 0;
}
