/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tree a flame graph draws: stacks merged frame by frame from the root,
 * each frame's weight split by the kind of time (enum rec_kind). A diff
 * tree also keeps BEFORE's weight of every frame, and the weight of stacks
 * that only BEFORE has ("gone"), which are drawn with that weight.
 */
#ifndef WPROF_FLAME_H
#define WPROF_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "recline.h"

struct strmap;

#define FLAME_NONE 0 /* no child, no sibling: node 0 is the root, nobody's child */

/*
 * The frames a tree holds (each takes some 200 bytes, and a rectangle in
 * the SVG): past them, a stack's frames the tree does not have yet are
 * merged into one FLAME_TRUNCATED frame under the last frame it has, with
 * its weight, and the stack is counted (stacks_merged).
 */
#define FLAME_MAX_NODES (256 * 1024)
#define FLAME_MAX_NODES_WORDS "262144"
#define FLAME_TRUNCATED "[truncated]"


struct flame_node {
	char *name;
	__u32 parent, depth;
	__u32 first_child, next_sibling; /* by (idle, name) after flame__finish() */
	__u64 w[REC_KIND_CNT]; /* weight by kind (AFTER's, in a diff) */
	__u64 total;           /* the sum of w[] */
	__u64 before;          /* a diff's BEFORE weight */
	__u64 gone;            /* the width of stacks only BEFORE has, in AFTER's units */
	bool idle;             /* in a thread that was asleep the whole window */
	bool waker;            /* after a "--" frame: a waker's stack (--wakers) */
};

struct flame {
	struct flame_node *nodes; /* [0] is the root, "all" */
	size_t nr, cap;
	size_t max_nodes;    /* FLAME_MAX_NODES; fewer in tests */
	__u64 stacks_merged; /* stacks with frames merged into FLAME_TRUNCATED */
	__u32 max_depth;
	__u64 kind_total[REC_KIND_CNT];
	__u64 kind_before[REC_KIND_CNT];
	__u64 idle_total; /* weight of idle threads' stacks */
	__u32 last;       /* the node the last flame__add() put its leaf in */
	struct strmap *children; /* (parent, idle, name) -> node */
};

/* NULL and errno set on failure. */
struct flame *flame__new(void);
/* NULL is ok. */
void flame__free(struct flame *fl);

/*
 * Add a stack: @frames (@len bytes) joined by ';', root first, of kind
 * @kind. Frames from index @idle_from on belong to an idle thread (they do
 * not merge with the same frames of busy threads); pass SIZE_MAX for none.
 * @after is the weight drawn. A diff adds BEFORE's weight too (@before,
 * what shares are computed from) and, for a stack AFTER does not have, the
 * width to draw it with (@gone: BEFORE's weight in AFTER's units); 0 and 0
 * otherwise. 0 or -errno (-EINVAL for an empty frame).
 */
int flame__add(struct flame *fl, const char *frames, size_t len, enum rec_kind kind,
	       size_t idle_from, __u64 after, __u64 before, __u64 gone);
/* Order every frame's children by (idle, name): call once, after the last add. 0 or -ENOMEM. */
int flame__finish(struct flame *fl);

/* What a frame is drawn with: its weight, or BEFORE's for what is gone. */
static inline __u64 flame__width(const struct flame_node *n)
{
	return n->total + n->gone;
}

/* The kind with the largest weight in @n (the colour family of a frame). */
enum rec_kind flame__kind(const struct flame_node *n);

#endif /* WPROF_FLAME_H */
