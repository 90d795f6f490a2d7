// SPDX-License-Identifier: GPL-2.0-only
/*
 * The long blocks of a recording, written for people (the summary, the
 * threads table) and for programs (the JSON report).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recline.h"
#include "safestr.h"
#include "timeline.h"

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

/* The innermost user frame of @b's stack (a kernel frame when it has none), into @buf. */
static void leaf_frame(const struct rec_block *b, char *buf, size_t size)
{
	const char *s = b->stack, *best = NULL, *end;
	size_t best_len = 0;
	char raw[128];

	for (const char *p = s; p && *p; p = end + (*end == ';')) {
		size_t len;

		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		len = end - p;
		/* kernel frames end in _[k]: the user leaf is the last other one */
		if (!best || len < 4 || strncmp(end - 4, "_[k]", 4)) {
			best = p;
			best_len = len;
		}
		if (!*end)
			break;
	}
	if (!best) {
		snprintf(buf, size, "[no stack]");
		return;
	}
	if (best_len >= sizeof(raw))
		best_len = sizeof(raw) - 1;
	memcpy(raw, best, best_len);
	raw[best_len] = '\0';
	/* a saved recording is anyone's: its frames are shown as safe text */
	safestr__str(buf, size, raw);
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
		char leaf[SAFESTR_SIZE(128)], comm[SAFESTR_SIZE(WPROF_COMM_LEN)], when[32];

		leaf_frame(b, leaf, sizeof(leaf));
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

void timeline__json(const struct recording *r, FILE *f)
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
}
