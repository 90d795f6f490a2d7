// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved recording's section of who ran instead (raninst.h): written
 * only where it was measured; a recording without it has no ran_instead.
 */
#include <errno.h>
#include <stdlib.h>

#include "recfile_priv.h"

/* 5 u32, an empty name's length, a u64 */
#define RAN_MIN_BYTES (5 * 4 + 4 + 8)

void recfile_put_ran(struct bytebuf *b, const struct recording *r)
{
	size_t s;

	if (!r->ran_recorded)
		return;
	s = begin_section(b, RS_RAN);
	put_u32(b, r->nr_ran);
	for (size_t i = 0; i < r->nr_ran; i++) {
		const struct ran_entry *e = &r->ran[i];

		put_u32(b, e->pid);
		put_u32(b, e->tid);
		put_u32(b, e->start_id);
		put_u32(b, e->runner_pid);
		put_u32(b, e->runner_tid);
		put_str(b, e->comm);
		put_u64(b, e->ns);
	}
	end_section(b, s);
}

int recfile_read_ran(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	__u32 n = get_u32(b);

	if (!count_fits(b, n, RAN_MIN_BYTES))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "ran instead");
	free(r->ran);
	r->nr_ran = 0;
	r->ran = calloc(n + 1, sizeof(*r->ran));
	if (!r->ran)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_; i++) {
		struct ran_entry *e = &r->ran[r->nr_ran++];

		e->pid = get_u32(b);
		e->tid = get_u32(b);
		e->start_id = get_u32(b);
		e->runner_pid = get_u32(b);
		e->runner_tid = get_u32(b);
		get_str_into(b, e->comm, sizeof(e->comm));
		e->ns = get_u64(b);
	}
	/* a file's order is not trusted: the writers search it */
	r->nr_ran = raninst__sort(r->ran, r->nr_ran);
	r->ran_recorded = true;
	return 0;
}
