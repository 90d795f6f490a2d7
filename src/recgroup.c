// SPDX-License-Identifier: GPL-2.0-only
/*
 * A recording's lines grouped as --group asks (group.h), for the outputs
 * of `wprof record` and `wprof report`: see recording__group().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "recinfo.h"
#include "recline.h"
#include "recording.h"

struct group_ctx {
	struct line_rewrite rw; /* first: recording__rewrite_lines() */
	const struct recording *r;
	enum group_by g;
};

/* @s into @dst as a frame: a ';' would split it. */
static void frame_copy(char *dst, size_t size, const char *s, size_t len)
{
	size_t n = len < size - 1 ? len : size - 1;

	memcpy(dst, s, n);
	dst[n] = '\0';
	for (char *p = dst; *p; p++)
		if (*p == ';')
			*p = ':';
}

static int group_line(const char *line, __u64 weight, __u64 count, __u64 max,
		      const struct folded_piece *p, size_t n, void *ctx)
{
	struct group_ctx *c = ctx;
	const struct recording *r = c->r;
	char name[256], ids[32] = "";
	struct rec_line rl;
	size_t need;
	int len;

	if (rec_line__split(line, r->tag_leaf, r->ids, &rl))
		return -EINVAL;
	if (c->g == GROUP_POOL) {
		group__pool_name(name, sizeof(name), rl.comm.s, rl.comm.len);
	} else if (c->g == GROUP_PROCESS) {
		const struct thread_acct *t = rec_info__thread_of(&r->prof, rl.pid, rl.tid);

		if (t && t->pcomm[0])
			frame_copy(name, sizeof(name), t->pcomm, strlen(t->pcomm));
		else
			frame_copy(name, sizeof(name), rl.comm.s, rl.comm.len);
	} else {
		name[0] = '\0';
	}
	/* none: no name, and no ids, whose threads the name would have stood for */
	if (r->ids && c->g != GROUP_NONE)
		snprintf(ids, sizeof(ids), "%u;%u;", rl.pid, rl.tid);
	need = strlen(line) + sizeof(name) + sizeof(ids) + 4;
	if (!line_rewrite__buf(&c->rw, need))
		return -ENOMEM;
	if (c->g == GROUP_NONE && !rl.body.len) /* a name alone stays: a line needs a frame */
		frame_copy(name, sizeof(name), rl.comm.s, rl.comm.len);
	if (r->tag_leaf)
		len = snprintf(c->rw.buf, c->rw.cap, "%s%s%s%.*s%s%.*s", ids, name,
			       name[0] && rl.body.len ? ";" : "", (int)rl.body.len, rl.body.s,
			       rl.tag.len ? ";" : "", (int)rl.tag.len, rl.tag.s);
	else
		len = snprintf(c->rw.buf, c->rw.cap, "%.*s%s%s%s%s%.*s", (int)rl.tag.len, rl.tag.s,
			       rl.tag.len ? ";" : "", ids, name, name[0] && rl.body.len ? ";" : "",
			       (int)rl.body.len, rl.body.s);
	return rec_splitter__add_pieces(&c->rw.sp, c->rw.out, c->rw.buf, len, 0, 0, weight, count,
					max, p, n);
}

int recording__group(struct recording *r, enum group_by g)
{
	struct group_ctx c = { .r = r, .g = g };
	int err;

	if (g == GROUP_THREAD)
		return 0;
	err = recording__rewrite_lines(r, group_line, &c.rw);
	if (!err && g == GROUP_NONE)
		r->ids = false;
	return err;
}
