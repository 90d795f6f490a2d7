// SPDX-License-Identifier: GPL-2.0-only
/* One line of a recording taken apart for the writers: see recline.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recline.h"

static const struct {
	const char *tag, *label;
} kinds[REC_KIND_CNT] = {
	[REC_ON_CPU] = { "on-cpu", "on-CPU" },
	[REC_SLEEP] = { "off-cpu:sleep", "sleep" },
	[REC_DISK] = { "off-cpu:disk", "disk" },
	[REC_RUNQ] = { "off-cpu:runqueue", "runqueue" },
	[REC_OFF] = { "off-cpu", "off-CPU" },
	[REC_STEAL] = { "steal", "steal" },
	[REC_THROTTLED] = { "off-cpu:runqueue:throttled", "throttled" },
	[REC_OTHER] = { "", "other" },
};

const char *rec_kind__tag(enum rec_kind k)
{
	return k < REC_KIND_CNT ? kinds[k].tag : "";
}

const char *rec_kind__label(enum rec_kind k)
{
	return k < REC_KIND_CNT ? kinds[k].label : "other";
}

enum rec_kind rec_kind__of(const char *name, size_t len)
{
	for (int k = 0; k < REC_OTHER; k++)
		if (strlen(kinds[k].tag) == len && !memcmp(kinds[k].tag, name, len))
			return k;
	return REC_OTHER;
}

/* The frame at *p (up to ';' or the end), and *p moved past it. */
static struct rec_span next_frame(const char **p, const char *end)
{
	const char *semi = memchr(*p, ';', end - *p);
	struct rec_span f = { *p, (semi ? semi : end) - *p };

	*p = semi ? semi + 1 : end;
	return f;
}

static int parse_id(struct rec_span f, __u32 *id)
{
	__u64 v = 0;

	if (!f.len || f.len > 10)
		return -EINVAL;
	for (size_t i = 0; i < f.len; i++) {
		if (f.s[i] < '0' || f.s[i] > '9')
			return -EINVAL;
		v = v * 10 + (f.s[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*id = v;
	return 0;
}

int rec_line__split(const char *line, bool tag_leaf, bool ids, struct rec_line *out)
{
	const char *p = line, *end = line + strlen(line);
	struct rec_span f;

	memset(out, 0, sizeof(*out));
	out->kind = REC_OTHER;
	if (p == end)
		return -EINVAL;
	if (tag_leaf) {
		const char *last = memrchr(line, ';', end - line);

		f.s = last ? last + 1 : line;
		f.len = end - f.s;
		out->kind = rec_kind__of(f.s, f.len);
		if (out->kind != REC_OTHER) {
			out->tag = f;
			end = last ? last : line;
		}
	} else {
		const char *q = p;

		f = next_frame(&q, end);
		out->kind = rec_kind__of(f.s, f.len);
		if (out->kind != REC_OTHER) {
			out->tag = f;
			p = q;
		}
	}
	if (ids && out->kind != REC_OTHER) {
		if (p >= end || parse_id(next_frame(&p, end), &out->pid) || p >= end ||
		    parse_id(next_frame(&p, end), &out->tid))
			return -EINVAL;
	}
	if (p >= end)
		return -EINVAL; /* nothing but a tag and ids */
	out->comm = next_frame(&p, end);
	out->body.s = p;
	out->body.len = end > p ? end - p : 0;
	return 0;
}

int rec_line__for_each_frame(const char *s, size_t len,
			     int (*fn)(const char *frame, size_t len, void *ctx), void *ctx)
{
	const char *p = s, *end = s + len;
	int err = 0;

	while (p < end && !err) {
		struct rec_span f = next_frame(&p, end);

		err = fn(f.s, f.len, ctx);
	}
	return err;
}

int rec_splitter__add(struct rec_splitter *sp, struct folded *out, const char *line, size_t len,
		      size_t skip, size_t nskip, __u64 weight, __u64 count, __u64 max)
{
	return rec_splitter__add_pieces(sp, out, line, len, skip, nskip, weight, count, max, NULL,
					0);
}

int rec_splitter__add_pieces(struct rec_splitter *sp, struct folded *out, const char *line,
			     size_t len, size_t skip, size_t nskip, __u64 weight, __u64 count,
			     __u64 max, const struct folded_piece *pieces, size_t n)
{
	size_t nr = 0;
	char *p;

	if (len + 1 > sp->cap) {
		char *b = realloc(sp->buf, len + 1);

		if (!b)
			return -ENOMEM;
		sp->buf = b;
		sp->cap = len + 1;
	}
	memcpy(sp->buf, line, len);
	sp->buf[len] = '\0';
	/* at most len / 2 + 1 frames */
	if (len / 2 + 2 > sp->cap_frames) {
		const char **f = realloc(sp->frames, (len / 2 + 2) * sizeof(*f));

		if (!f)
			return -ENOMEM;
		sp->frames = f;
		sp->cap_frames = len / 2 + 2;
	}
	for (p = sp->buf;; p++) {
		sp->frames[nr++] = p;
		p = strchr(p, ';');
		if (!p)
			break;
		*p = '\0';
	}
	if (nskip) {
		if (nr <= skip + nskip)
			return -EINVAL;
		memmove(&sp->frames[skip], &sp->frames[skip + nskip],
			(nr - skip - nskip) * sizeof(*sp->frames));
	}
	return folded__add_full(out, sp->frames, nr - nskip, weight, count, max, pieces, n);
}

void rec_splitter__free(struct rec_splitter *sp)
{
	free(sp->buf);
	free(sp->frames);
	memset(sp, 0, sizeof(*sp));
}

struct strip_ctx {
	struct folded *out;
	bool tag_leaf;
	struct rec_splitter sp;
};

static int strip_one(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	struct strip_ctx *c = ctx;

	/* the ids follow the tag, or start the line with the tag at the leaf */
	return rec_splitter__add(&c->sp, c->out, line, strlen(line), c->tag_leaf ? 0 : 1, 2, weight,
				 count, max);
}

int rec_line__strip_ids(const struct folded *in, bool tag_leaf, struct folded *out)
{
	struct strip_ctx c = { .out = out, .tag_leaf = tag_leaf };
	int err = folded__for_each(in, strip_one, &c);

	rec_splitter__free(&c.sp);
	return err;
}
