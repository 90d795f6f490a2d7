// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "debughint.h"
#include "recline.h"
#include "recording.h"

/* "wprof record -d 3 -- ls": for people, not to be run again (no quoting). */
static char *join_args(int argc, char **argv)
{
	size_t len = strlen("wprof") + 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, "wprof");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* The debug hints the summary ends with, as text: they need the symbolizer and dpkg. */
static int capture_hints(struct recording *r, const struct symbolizer *sym)
{
	size_t len = 0;
	FILE *f = open_memstream(&r->notes, &len);

	if (!f)
		return -errno;
	debughint__print(sym, f);
	if (fclose(f))
		return -ENOMEM;
	if (!len) {
		free(r->notes);
		r->notes = NULL;
	}
	return 0;
}

int recording__capture(struct recording *r, struct profile *p, struct folded *lines,
		       struct session *s, const struct symbolizer *sym,
		       const struct record_opts *o, int argc, char **argv)
{
	memset(r, 0, sizeof(*r));
	r->prof = *p;
	memset(p, 0, sizeof(*p));
	r->lines = lines;
	rec_info__fill(&r->info, o, &r->prof, session__window_start_ns(s));
	r->tag_leaf = o->tag_leaf;
	r->ids = opts__line_ids(o);
	r->no_states = o->no_states;
	r->wakers = o->wakers;
	r->inlines = o->inlines;
	session__stats(s, r->stats);
	session__drain_stats(s, &r->drain);
	symbolizer__stats(sym, &r->sym);
	r->cmdline = join_args(argc, argv);
	if (!r->cmdline)
		return -ENOMEM;
	return capture_hints(r, sym);
}

void recording__free(struct recording *r)
{
	profile__free(&r->prof);
	folded__free(r->lines);
	free(r->cmdline);
	free(r->notes);
	memset(r, 0, sizeof(*r));
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

/* Keep a line of a selected thread, frames and counts as they are. */
static int keep_line(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	struct filter_ctx *c = ctx;
	const struct thread_acct *t;
	struct rec_line rl;

	if (rec_line__split(line, c->r->tag_leaf, true, &rl))
		return -EINVAL;
	t = rec_info__thread(&c->r->prof, rl.tid);
	if (!t || !t->selected)
		return 0;
	return rec_splitter__add(&c->sp, c->out, line, strlen(line), 0, 0, weight, count, max);
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
		if (t->on_us && !t->samples) {
			p->unsampled_threads++;
			p->unsampled_us += t->on_us;
		}
		p->untimed_threads += !t->on_ns && t->samples;
	}
	p->threads_left_out = p->nr_threads - selected;
	c.out = folded__new();
	if (!c.out)
		return -ENOMEM;
	err = folded__for_each(r->lines, keep_line, &c);
	rec_splitter__free(&c.sp);
	if (err) {
		folded__free(c.out);
		return err;
	}
	folded__free(r->lines);
	r->lines = c.out;
	return 0;
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
