// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved recording's timeline sections, each written and read back side
 * by side: RS_BLOCKS (the long blocks), RS_SLICES (each line's pieces by
 * slice, read before the lines they belong to) and RS_TIMES (the threads'
 * times by slice). See recfile_priv.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "recfile_priv.h"
#include "threadtime.h"

/* --- long blocks --- */

/* RS_BLOCKS flags */
enum {
	BF_OPEN = 1 << 0,
};

void recfile_put_blocks(struct bytebuf *b, const struct recording *r)
{
	size_t s = begin_section(b, RS_BLOCKS);

	put_u64(b, r->long_block_ns);
	put_u32(b, r->nr_blocks);
	for (size_t i = 0; i < r->nr_blocks; i++) {
		const struct rec_block *k = &r->blocks[i];

		put_u32(b, k->pid);
		put_u32(b, k->tid);
		put_u32(b, k->state);
		put_u32(b, k->open ? BF_OPEN : 0);
		put_str(b, k->comm);
		put_u64(b, k->start_ns);
		put_u64(b, k->offset_ns);
		put_u64(b, k->blocked_ns);
		put_u64(b, k->runq_ns);
		put_str(b, k->stack);
		put_str(b, k->waker ? k->waker : "");
	}
	end_section(b, s);
}

/* 4 u32, 2 empty strings' lengths, 4 u64, a stack's length */
#define BLOCK_MIN_BYTES (4 * 4 + 2 * 4 + 4 * 8 + 4)

int recfile_read_blocks(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	__u64 threshold = get_u64(b);
	__u32 n = get_u32(b);
	bool oom = false;

	if (!count_fits(b, n, BLOCK_MIN_BYTES))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "long blocks");
	r->long_block_ns = threshold;
	r->blocks = calloc(n + 1, sizeof(*r->blocks));
	if (!r->blocks)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_ && !oom; i++) {
		struct rec_block *k = &r->blocks[r->nr_blocks++];

		k->pid = get_u32(b);
		k->tid = get_u32(b);
		k->state = get_u32(b);
		k->open = get_u32(b) & BF_OPEN;
		get_str_into(b, k->comm, sizeof(k->comm));
		k->start_ns = get_u64(b);
		k->offset_ns = get_u64(b);
		k->blocked_ns = get_u64(b);
		k->runq_ns = get_u64(b);
		k->stack = get_str(b, &oom);
		k->waker = get_str(b, &oom);
		if (k->waker && !k->waker[0]) {
			free(k->waker);
			k->waker = NULL;
		}
		/* the writers add the two: a sum that wraps is no length */
		if (k->blocked_ns > UINT64_MAX - k->runq_ns || !k->stack ||
		    k->state >= WPROF_STATE_CNT)
			return oom ? -ENOMEM : fail(l, -EBADMSG, "corrupt recording (%s)",
						    "long blocks: a bad entry");
	}
	return oom ? -ENOMEM : 0;
}

/* --- slices --- */

int recfile_put_pieces(const char *line, __u64 weight, __u64 count, __u64 max,
		       const struct folded_piece *p, size_t n, void *ctx)
{
	struct bytebuf *b = ctx;

	put_u32(b, n);
	for (size_t i = 0; i < n; i++) {
		put_u32(b, p[i].slice);
		put_u32(b, p[i].span);
		put_u64(b, p[i].weight);
		put_u64(b, p[i].count);
		put_u64(b, p[i].max);
	}
	return b->oom ? -ENOMEM : 0;
}

/* u32 slice, u32 span, 3 u64 */
#define PIECE_BYTES (2 * 4 + 3 * 8)

int recfile_read_slices(struct loader *l, struct rbuf *b)
{
	__u64 slice_ns = get_u64(b), n = get_u64(b);

	if (l->seen[RS_LINES])
		return fail(l, -EBADMSG, "corrupt recording (%s)", "slices after the stacks");
	if (!count_fits(b, n, 4) || !slice_ns)
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "slices");
	l->r->slice_ns = slice_ns;
	l->pieces = calloc(n + 1, sizeof(*l->pieces));
	if (!l->pieces)
		return -ENOMEM;
	for (__u64 i = 0; i < n && !b->short_; i++) {
		struct line_pieces *lp = &l->pieces[l->nr_pieces++];
		__u32 k = get_u32(b);

		if (!count_fits(b, k, PIECE_BYTES))
			return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
				    "slices");
		lp->p = calloc(k + 1, sizeof(*lp->p));
		if (!lp->p)
			return -ENOMEM;
		for (__u32 j = 0; j < k && !b->short_; j++, lp->n++) {
			lp->p[j].slice = get_u32(b);
			lp->p[j].span = get_u32(b);
			lp->p[j].weight = get_u64(b);
			lp->p[j].count = get_u64(b);
			lp->p[j].max = get_u64(b);
		}
	}
	return 0;
}

/* --- thread times --- */

void recfile_put_times(struct bytebuf *b, const struct threadtimes *tt)
{
	size_t s;

	if (!tt->nr)
		return;
	s = begin_section(b, RS_TIMES);
	put_u32(b, WPROF_STATE_CNT);
	put_u64(b, tt->nr);
	for (size_t i = 0; i < tt->nr; i++) {
		const struct thread_time *t = &tt->t[i];

		put_u32(b, t->pid);
		put_u32(b, t->tid);
		put_u32(b, t->start_id);
		put_u32(b, t->nr);
		for (__u32 k = 0; k < t->nr; k++) {
			put_u32(b, t->rows[k].slice);
			put_u32(b, t->rows[k].span);
			for (int st = 0; st < WPROF_STATE_CNT; st++)
				put_u64(b, t->rows[k].ns[st]);
		}
	}
	end_section(b, s);
}

int recfile_read_times(struct loader *l, struct rbuf *b)
{
	__u32 states = get_u32(b);
	__u64 n = get_u64(b);

	/* the states by enum wprof_state: one this build does not know is left out */
	if (!states || states > 64 || !count_fits(b, n, 4 * 4))
		return fail(l, -EBADMSG, "corrupt recording (%s)", "thread times: bad counts");
	for (__u64 i = 0; i < n && !b->short_; i++) {
		__u32 pid = get_u32(b), tid = get_u32(b), start_id = get_u32(b), rows = get_u32(b);

		if (!count_fits(b, rows, 8 + 8 * (size_t)states))
			return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
				    "thread times");
		for (__u32 k = 0; k < rows && !b->short_; k++) {
			__u32 slice = get_u32(b), span = get_u32(b);
			__u64 ns[WPROF_STATE_CNT] = {};

			for (__u32 st = 0; st < states; st++) {
				__u64 v = get_u64(b);

				if (st < WPROF_STATE_CNT)
					ns[st] = v;
			}
			if (threadtimes__add(&l->r->prof.times, pid, tid, start_id, slice, span, ns))
				return -ENOMEM;
		}
	}
	return 0;
}
