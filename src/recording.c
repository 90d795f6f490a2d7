// SPDX-License-Identifier: GPL-2.0-only
/* Everything one recording measured, in plain memory: see recording.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recline.h"
#include "recording.h"

void recording__free(struct recording *r)
{
	profile__free(&r->prof);
	folded__free(r->lines);
	free(r->cmdline);
	free(r->notes);
	for (size_t i = 0; i < r->nr_procs; i++)
		free(r->procs[i].cmdline);
	free(r->procs);
	for (size_t i = 0; i < r->nr_blocks; i++) {
		free(r->blocks[i].stack);
		free(r->blocks[i].waker);
	}
	free(r->blocks);
	free(r->cgroups);
	free(r->ran);
	memset(r, 0, sizeof(*r));
}

const char *recording__cmdline(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nr_procs; i++)
		if (r->procs[i].pid == pid)
			return r->procs[i].cmdline;
	return NULL;
}

static bool has_id(const __u32 *ids, size_t n, __u32 id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

struct filter_ctx {
	const struct recording *r;
	struct folded *out;
	struct rec_splitter sp;
};

/*
 * Whether a thread @pid/@tid is selected. A reused tid is several threads
 * (sorted by tid, then start_id), which a line does not tell apart: any of
 * them of @pid.
 */
static bool selected(const struct profile *p, __u32 pid, __u32 tid)
{
	const struct thread_acct *t = profile__thread(p, tid);
	size_t i;

	if (!t)
		return false;
	for (i = t - p->threads; i > 0 && p->threads[i - 1].tid == tid; i--)
		;
	for (; i < p->nr_threads && p->threads[i].tid == tid; i++)
		if (p->threads[i].pid == pid && p->threads[i].selected)
			return true;
	return false;
}

/* Keep a line of a selected thread, frames and counts as they are. */
static int keep_line(const char *line, __u64 weight, __u64 count, __u64 max,
		     const struct folded_piece *p, size_t n, void *ctx)
{
	struct filter_ctx *c = ctx;
	struct rec_line rl;

	if (rec_line__split(line, c->r->tag_leaf, true, &rl))
		return -EINVAL;
	if (!selected(&c->r->prof, rl.pid, rl.tid))
		return 0;
	return rec_splitter__add_pieces(&c->sp, c->out, line, strlen(line), 0, 0, weight, count,
					max, p, n);
}

/* Keep the long blocks of the selected threads, in their order. */
static void filter_blocks(struct recording *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_blocks; i++) {
		struct rec_block *b = &r->blocks[i];

		if (selected(&r->prof, b->pid, b->tid)) {
			r->blocks[n++] = *b;
			continue;
		}
		free(b->stack);
		free(b->waker);
	}
	r->nr_blocks = n;
}

int recording__filter(struct recording *r, const struct rec_filter *f)
{
	struct profile *p = &r->prof;
	struct filter_ctx c = { .r = r };
	size_t selected = 0;
	int err;

	if (!r->ids)
		return -EINVAL;
	p->unsampled_threads = p->unsampled_us = p->untimed_threads = 0;
	for (size_t i = 0; i < p->nr_threads; i++) {
		struct thread_acct *t = &p->threads[i];

		t->selected = t->selected &&
			      profile__selects(t, f->thread_glob, f->comm_glob, f->no_idle_threads) &&
			      (!f->pids || has_id(f->pids, f->nr_pids, t->pid)) &&
			      (!f->tids || has_id(f->tids, f->nr_tids, t->tid));
		if (!t->selected)
			continue;
		selected++;
		/* as profile__build() counts them, over the selected threads */
		if (profile__ran_unsampled(t)) {
			p->unsampled_threads++;
			p->unsampled_us += t->on_us + t->off_us[WPROF_STEAL];
		}
		p->untimed_threads += !t->on_ns && !t->off_ns[WPROF_STEAL] && t->samples;
	}
	p->threads_left_out = p->nr_threads - selected;
	c.out = folded__new();
	if (!c.out)
		return -ENOMEM;
	err = folded__for_each_pieces(r->lines, keep_line, &c);
	rec_splitter__free(&c.sp);
	if (err) {
		folded__free(c.out);
		return err;
	}
	folded__free(r->lines);
	r->lines = c.out;
	filter_blocks(r);
	/* the cgroups of the processes a thread of which is still selected */
	selected = 0;
	for (size_t i = 0; i < r->nr_cgroups; i++) {
		bool any = false;

		for (size_t k = 0; k < p->nr_threads && !any; k++)
			any = p->threads[k].selected && p->threads[k].pid == r->cgroups[i].pid;
		if (any)
			r->cgroups[selected++] = r->cgroups[i];
	}
	r->nr_cgroups = selected;
	return 0;
}

char *line_rewrite__buf(struct line_rewrite *rw, size_t need)
{
	char *b;

	if (need <= rw->cap)
		return rw->buf;
	b = realloc(rw->buf, need);
	if (!b)
		return NULL;
	rw->buf = b;
	rw->cap = need;
	return b;
}

int recording__rewrite_lines(struct recording *r, folded_pieces_fn fn, struct line_rewrite *rw)
{
	int err;

	rw->out = folded__new();
	if (!rw->out)
		return -ENOMEM;
	err = folded__for_each_pieces(r->lines, fn, rw);
	rec_splitter__free(&rw->sp);
	free(rw->buf);
	if (err) {
		folded__free(rw->out);
		return err;
	}
	folded__free(r->lines);
	r->lines = rw->out;
	return 0;
}

struct leaf_ctx {
	struct line_rewrite rw; /* first: recording__rewrite_lines() */
	bool ids;
};

/* "TAG;REST" as "REST;TAG"; a line without a tag frame as it is. */
static int leaf_line(const char *line, __u64 weight, __u64 count, __u64 max,
		     const struct folded_piece *p, size_t n, void *ctx)
{
	struct leaf_ctx *c = ctx;
	const char *semi = strchr(line, ';');
	size_t len = strlen(line), tag, rest;
	struct rec_line rl;
	char *buf;

	if (rec_line__split(line, false, c->ids, &rl))
		return -EINVAL;
	if (!rl.tag.len || !semi)
		return rec_splitter__add_pieces(&c->rw.sp, c->rw.out, line, len, 0, 0, weight,
						count, max, p, n);
	tag = semi - line;
	rest = len - tag - 1;
	buf = line_rewrite__buf(&c->rw, len + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, semi + 1, rest);
	buf[rest] = ';';
	memcpy(buf + rest + 1, line, tag);
	return rec_splitter__add_pieces(&c->rw.sp, c->rw.out, buf, len, 0, 0, weight, count, max,
					p, n);
}

int recording__tag_leaf(struct recording *r)
{
	struct leaf_ctx c = { .ids = r->ids };
	int err;

	if (r->tag_leaf)
		return 0;
	err = recording__rewrite_lines(r, leaf_line, &c.rw);
	if (!err)
		r->tag_leaf = true;
	return err;
}

int recording__write_folded(const struct recording *r, FILE *f)
{
	struct folded *plain;
	int err;

	if (!r->ids)
		return folded__write(r->lines, f);
	plain = folded__new();
	if (!plain)
		return -ENOMEM;
	err = rec_line__strip_ids(r->lines, r->tag_leaf, plain);
	if (!err)
		err = folded__write(plain, f);
	folded__free(plain);
	return err;
}
