// SPDX-License-Identifier: GPL-2.0-only
/*
 * The long blocks of a recording, written for people (the summary, the
 * threads table) and for programs (the JSON report).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hmap.h"
#include "recinfo.h"
#include "recline.h"
#include "safestr.h"
#include "timeline.h"

/*
 * The most threads x slices the JSON report lists times of (40 bytes each
 * while written): 1000 threads over 70 minutes of 1 s slices
 */
#define TIMELINE_MAX_CELLS (4ULL << 20)
/* how many of the longest blocks the summary names */
#define SUMMARY_BLOCKS 3

const char *timeline__state(__u32 state)
{
	switch (state) {
	case WPROF_OFF_SLEEP:
		return "sleep";
	case WPROF_OFF_DISK:
		return "disk";
	case WPROF_OFF_RUNQ:
		return "runqueue";
	case WPROF_OFF_THROTTLED:
		return "throttled";
	default:
		return "other";
	}
}

const struct rec_block *timeline__longest(const struct recording *r, __u32 pid, __u32 tid)
{
	const struct rec_block *best = NULL;

	for (size_t i = 0; i < r->nr_blocks; i++) {
		const struct rec_block *b = &r->blocks[i];

		if (b->pid != pid || (tid && b->tid != tid))
			continue;
		if (!best || rec_block__ns(b) > rec_block__ns(best))
			best = b;
	}
	return best;
}

const char *timeline__leaf(const struct rec_block *b, size_t *len)
{
	const char *best = NULL, *end;

	*len = 0;
	for (const char *p = b->stack; p && *p; p = end + 1) {
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		/* kernel frames end in _[k]: the user leaf is the last other one */
		if (!best || end - p < 4 || strncmp(end - 4, "_[k]", 4)) {
			best = p;
			*len = end - p;
		}
		if (!*end)
			break;
	}
	return best;
}

/* Whether frame @f (@len bytes) is a Python function's: "qualname (file.py:LINE)" or "... (file.py)". */
static bool is_py_frame(const char *f, size_t len)
{
	const char *open = NULL;

	if (len < 6 || f[len - 1] != ')')
		return false;
	for (size_t i = len - 1; i-- > 0 && !open;)
		if (f[i] == '(')
			open = f + i;
	if (!open || open == f || open[-1] != ' ')
		return false;
	for (const char *p = f + len - 2; p > open; p--) {
		if (*p == ':' || (*p >= '0' && *p <= '9'))
			continue;
		return p - open >= 3 && !strncmp(p - 2, ".py", 3);
	}
	return false;
}

/* @b's innermost Python frame, if it has one: NULL else. */
static const char *py_leaf(const struct rec_block *b, size_t *len)
{
	const char *best = NULL, *end;

	for (const char *p = b->stack; p && *p; p = end + 1) {
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		if (is_py_frame(p, end - p)) {
			best = p;
			*len = end - p;
		}
		if (!*end)
			break;
	}
	return best;
}

/*
 * @b's leaf frame as safe text, its first 127 bytes, into @buf; "[no stack]"
 * when none. A Python program's: and the Python function it was in.
 */
static void leaf_text(const struct rec_block *b, char *buf, size_t size)
{
	size_t len, plen = 0, n;
	const char *leaf = timeline__leaf(b, &len), *py = py_leaf(b, &plen);

	if (!leaf) {
		snprintf(buf, size, "[no stack]");
		return;
	}
	/* a saved recording is anyone's: its frames are shown as safe text */
	n = safestr__text(buf, size, leaf, len < 128 ? len : 127);
	if (py && py != leaf && n + 8 < size) {
		strcpy(buf + n, " under ");
		safestr__text(buf + n + 7, size - n - 7, py, plen < 128 ? plen : 127);
	}
}

static int cmp_longest(const void *a, const void *b)
{
	const struct rec_block *x = *(const struct rec_block *const *)a;
	const struct rec_block *y = *(const struct rec_block *const *)b;

	if (rec_block__ns(x) != rec_block__ns(y))
		return rec_block__ns(x) > rec_block__ns(y) ? -1 : 1;
	return x->offset_ns < y->offset_ns ? -1 : x->offset_ns > y->offset_ns;
}

/* "14:05:21.512": the local time of @unix_ns. */
static void clock_time(__u64 unix_ns, char *buf, size_t size)
{
	time_t t = unix_ns / 1000000000ULL;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, size, "%H:%M:%S", &tm)) {
		snprintf(buf, size, "?");
		return;
	}
	snprintf(buf + strlen(buf), size - strlen(buf), ".%03llu",
		 (unsigned long long)(unix_ns / 1000000ULL % 1000));
}

void timeline__summary(const struct recording *r, FILE *f)
{
	const struct rec_block *top[SUMMARY_BLOCKS] = {}, **all;
	size_t n = 0;

	if (!r->nr_blocks)
		return;
	all = malloc(r->nr_blocks * sizeof(*all));
	if (all) {
		for (size_t i = 0; i < r->nr_blocks; i++)
			all[i] = &r->blocks[i];
		qsort(all, r->nr_blocks, sizeof(*all), cmp_longest);
		for (; n < SUMMARY_BLOCKS && n < r->nr_blocks; n++)
			top[n] = all[n];
		free(all);
	}
	fprintf(f, "wprof: longest of %zu blocks of %llu ms or more (-f json lists them all):\n",
		r->nr_blocks, (unsigned long long)r->long_block_ns / 1000000);
	for (size_t i = 0; i < n; i++) {
		const struct rec_block *b = top[i];
		char leaf[2 * SAFESTR_SIZE(128) + 8], comm[SAFESTR_SIZE(WPROF_COMM_LEN)], when[32];

		leaf_text(b, leaf, sizeof(leaf));
		safestr__str(comm, sizeof(comm), b->comm);
		clock_time(b->start_ns, when, sizeof(when));
		fprintf(f, "wprof:   %.3f s %s at %s (+%.3f s%s): %s %u in %s\n",
			rec_block__ns(b) / 1e9, timeline__state(b->state), when,
			b->offset_ns / 1e9, b->open ? ", still going at the end" :
			!b->offset_ns ? ", from the start" : "", comm, b->tid, leaf);
	}
}

struct frames {
	FILE *f;
	bool first;
};

static int json_frame(const char *frame, size_t len, void *ctx)
{
	struct frames *fr = ctx;

	fputs(fr->first ? "" : ", ", fr->f);
	safestr__json(fr->f, frame, len);
	fr->first = false;
	return 0;
}

static void json_frames(FILE *f, const char *s)
{
	struct frames fr = { .f = f, .first = true };

	fputc('[', f);
	if (s)
		rec_line__for_each_frame(s, strlen(s), json_frame, &fr);
	fputc(']', f);
}

/* The columns of a thread's slices: the states as the threads' JSON names them */
enum { COL_ON, COL_STEAL, COL_RUNQ, COL_THROTTLED, COL_SLEEP, COL_DISK, NR_COLS };
static const char *const col_names[NR_COLS] = {
	"on_cpu_us", "steal_us", "runqueue_us", "throttled_us", "sleep_us", "disk_us",
};

struct thread_slices {
	__u32 pid, tid;
	__u64 *us; /* [NR_COLS][nr slices] */
};

struct slices_ctx {
	const struct recording *r;
	__u64 nr;
	struct hmap by_id;
	struct thread_slices *t;
	size_t nr_t, cap_t;
	int err;
};

static struct thread_slices *find_slices(struct slices_ctx *c, __u32 pid, __u32 tid)
{
	void *v = hmap__get(&c->by_id, pid, tid);

	return v ? &c->t[(size_t)v - 1] : NULL;
}

static struct thread_slices *slices_of(struct slices_ctx *c, __u32 pid, __u32 tid)
{
	void *v = hmap__get(&c->by_id, pid, tid), *old;
	struct thread_slices *t;

	if (v)
		return &c->t[(size_t)v - 1];
	if (c->nr_t == c->cap_t) {
		size_t cap = c->cap_t ? 2 * c->cap_t : 16;

		t = realloc(c->t, cap * sizeof(*t));
		if (!t)
			return NULL;
		c->t = t;
		c->cap_t = cap;
	}
	t = &c->t[c->nr_t];
	t->pid = pid;
	t->tid = tid;
	t->us = calloc(NR_COLS * c->nr, sizeof(*t->us));
	if (!t->us || hmap__put(&c->by_id, pid, tid, (void *)(c->nr_t + 1), &old)) {
		free(t->us);
		return NULL;
	}
	c->nr_t++;
	return t;
}

/*
 * A steal line's pieces into its thread's slices, as steal, out of its runs:
 * the exact time by slice has runs, steal in them; samples measured the steal.
 */
static int steal_line(const char *line, __u64 weight, __u64 count, __u64 max,
		      const struct folded_piece *p, size_t n, void *ctx)
{
	struct slices_ctx *c = ctx;
	struct thread_slices *t;
	struct rec_line rl;

	if (rec_line__split(line, c->r->tag_leaf, c->r->ids, &rl))
		return -EINVAL;
	if (rl.kind != REC_STEAL || !(t = find_slices(c, rl.pid, rl.tid)))
		return 0;
	for (size_t i = 0; i < n; i++) {
		__u64 each, rest;

		if (!p[i].span || p[i].slice >= c->nr)
			continue;
		each = p[i].weight / p[i].span;
		rest = p[i].weight % p[i].span;
		for (__u64 s = p[i].slice; s < (__u64)p[i].slice + p[i].span && s < c->nr; s++) {
			__u64 us = each + (s - p[i].slice < rest), *on = &t->us[COL_ON * c->nr + s];

			t->us[COL_STEAL * c->nr + s] += us;
			*on = *on > us ? *on - us : 0;
		}
	}
	return 0;
}

/* The selected threads' exact time by slice, in us, each row spread evenly. */
static int thread_slices(struct slices_ctx *c)
{
	static const int col[WPROF_STATE_CNT] = {
		[WPROF_ON_CPU] = COL_ON, [WPROF_OFF_SLEEP] = COL_SLEEP, [WPROF_OFF_DISK] = COL_DISK,
		[WPROF_OFF_RUNQ] = COL_RUNQ, [WPROF_STEAL] = COL_STEAL,
		[WPROF_OFF_THROTTLED] = COL_THROTTLED,
	};
	const struct threadtimes *tt = &c->r->prof.times;

	for (size_t i = 0; i < tt->nr; i++) {
		const struct thread_time *tm = &tt->t[i];
		const struct thread_acct *a = rec_info__thread_of(&c->r->prof, tm->pid, tm->tid);
		struct thread_slices *t;

		if (!a || !a->selected)
			continue;
		t = slices_of(c, tm->pid, tm->tid);
		if (!t)
			return -ENOMEM;
		for (__u32 k = 0; k < tm->nr; k++) {
			const struct time_row *r = &tm->rows[k];

			for (int st = 0; st < WPROF_STATE_CNT; st++) {
				__u64 each = r->ns[st] / r->span, rest = r->ns[st] % r->span;

				for (__u64 s = r->slice; s < (__u64)r->slice + r->span && s < c->nr;
				     s++)
					t->us[col[st] * c->nr + s] +=
						(each + (s - r->slice < rest) + 500) / 1000;
			}
		}
	}
	return 0;
}

static int cmp_slices(const void *a, const void *b)
{
	const struct thread_slices *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* "slices": each thread's time by state and slice, from its lines' pieces. */
static int json_slices(const struct recording *r, FILE *f)
{
	struct slices_ctx c = { .r = r, .nr = recording__nr_slices(r) };
	int err;

	/* more than anyone reads (a saved file's claim, maybe): none, and said */
	if (c.nr * (r->prof.times.nr + 1) > TIMELINE_MAX_CELLS)
		c.nr = 0;
	err = c.nr ? thread_slices(&c) : 0;

	if (!err && c.nr && r->ids)
		err = folded__for_each_pieces(r->lines, steal_line, &c);

	fprintf(f, "  \"slice_ns\": %llu, \"slices_left_out\": %s, \"slices\": [",
		(unsigned long long)r->slice_ns, !c.nr && recording__nr_slices(r) ? "true" : "false");
	if (!err && c.nr_t)
		qsort(c.t, c.nr_t, sizeof(*c.t), cmp_slices);
	for (size_t i = 0; i < c.nr_t && !err; i++) {
		fprintf(f, "%s\n    {\"pid\": %u, \"tid\": %u", i ? "," : "", c.t[i].pid,
			c.t[i].tid);
		for (int k = 0; k < NR_COLS; k++) {
			fprintf(f, ", \"%s\": [", col_names[k]);
			for (__u64 s = 0; s < c.nr; s++)
				fprintf(f, "%s%llu", s ? ", " : "",
					(unsigned long long)c.t[i].us[k * c.nr + s]);
			fputc(']', f);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n");
	for (size_t i = 0; i < c.nr_t; i++)
		free(c.t[i].us);
	free(c.t);
	hmap__clear(&c.by_id);
	return err;
}

int timeline__json(const struct recording *r, FILE *f)
{
	fprintf(f, "  \"start_unix_ns\": %llu, \"window_ns\": %llu, \"long_block_ns\": %llu,\n",
		(unsigned long long)r->info.start_ns, (unsigned long long)r->prof.window_ns,
		(unsigned long long)r->long_block_ns);
	fprintf(f, "  \"long_blocks\": [");
	for (size_t i = 0; i < r->nr_blocks; i++) {
		const struct rec_block *b = &r->blocks[i];

		fprintf(f, "%s\n    {\"pid\": %u, \"tid\": %u, \"comm\": ", i ? "," : "", b->pid,
			b->tid);
		safestr__json(f, b->comm, strnlen(b->comm, sizeof(b->comm)));
		fprintf(f, ", \"state\": \"%s\", \"start_unix_ns\": %llu, \"offset_ns\": %llu, "
			"\"duration_ns\": %llu, \"blocked_ns\": %llu, \"runq_ns\": %llu, "
			"\"open\": %s,\n     \"stack\": ", timeline__state(b->state),
			(unsigned long long)b->start_ns, (unsigned long long)b->offset_ns,
			(unsigned long long)rec_block__ns(b), (unsigned long long)b->blocked_ns,
			(unsigned long long)b->runq_ns, b->open ? "true" : "false");
		json_frames(f, b->stack);
		if (b->waker) {
			fprintf(f, ", \"waker\": ");
			json_frames(f, b->waker);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n");
	return json_slices(r, f);
}
