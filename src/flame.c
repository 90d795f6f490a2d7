// SPDX-License-Identifier: GPL-2.0-only
/* The tree a flame graph draws, merged from the root, and its walks: see flame.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "strmap.h"

struct flame *flame__new(void)
{
	struct flame *fl = calloc(1, sizeof(*fl));

	if (!fl)
		return NULL;
	fl->cap = 1024;
	fl->max_nodes = FLAME_MAX_NODES;
	fl->nodes = calloc(fl->cap, sizeof(*fl->nodes));
	fl->children = strmap__new();
	if (!fl->nodes || !fl->children)
		goto fail;
	fl->nodes[0].name = strdup("all");
	if (!fl->nodes[0].name)
		goto fail;
	fl->nr = 1;
	return fl;
fail:
	flame__free(fl);
	errno = ENOMEM;
	return NULL;
}

void flame__free(struct flame *fl)
{
	if (!fl)
		return;
	for (size_t i = 0; i < fl->nr; i++)
		free(fl->nodes[i].name);
	free(fl->nodes);
	strmap__free(fl->children);
	free(fl);
}

static __u64 sat_add(__u64 a, __u64 b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * The child @name of @parent, made when it is new; its index, or -errno:
 * -ENOSPC when it is new and the tree has its max_nodes, unless @force.
 */
static long child(struct flame *fl, __u32 parent, bool idle, const char *name, size_t len,
		  bool force)
{
	char stack_key[256], *key = stack_key;
	size_t klen = sizeof(parent) + 1 + len;
	struct flame_node *n;
	__u64 idx;
	int ret;

	if (klen > sizeof(stack_key) && !(key = malloc(klen)))
		return -ENOMEM;
	memcpy(key, &parent, sizeof(parent));
	key[sizeof(parent)] = idle;
	memcpy(key + sizeof(parent) + 1, name, len);
	if (fl->nr >= UINT32_MAX) {
		ret = -E2BIG;
		goto out;
	}
	if (!force && fl->nr >= fl->max_nodes) {
		/* only frames already in the tree: what a hostile file makes new is merged */
		ret = strmap__get(fl->children, key, klen, &idx) ? -ENOSPC : 0;
		goto out;
	}
	ret = strmap__intern(fl->children, key, klen, fl->nr, &idx);
	if (ret <= 0)
		goto out;
	if (fl->nr == fl->cap) {
		n = realloc(fl->nodes, 2 * fl->cap * sizeof(*n));
		if (!n) {
			ret = -ENOMEM;
			goto out;
		}
		fl->nodes = n;
		fl->cap *= 2;
	}
	n = &fl->nodes[fl->nr];
	memset(n, 0, sizeof(*n));
	n->name = strndup(name, len);
	if (!n->name) {
		ret = -ENOMEM;
		goto out;
	}
	n->parent = parent;
	n->depth = fl->nodes[parent].depth + 1;
	n->idle = idle;
	n->next_sibling = fl->nodes[parent].first_child;
	fl->nodes[parent].first_child = fl->nr++;
	if (n->depth > fl->max_depth)
		fl->max_depth = n->depth;
	ret = 1;
out:
	if (key != stack_key)
		free(key);
	return ret < 0 ? ret : (long)idx;
}

static void add_weight(struct flame_node *n, enum rec_kind kind, __u64 after, __u64 before,
		       __u64 gone)
{
	n->w[kind] = sat_add(n->w[kind], after);
	n->total = sat_add(n->total, after);
	n->before = sat_add(n->before, before);
	n->gone = sat_add(n->gone, gone);
}

int flame__add(struct flame *fl, const char *frames, size_t len, enum rec_kind kind,
	       size_t idle_from, __u64 after, __u64 before, __u64 gone)
{
	const char *p = frames, *end = frames + len;
	__u32 cur = 0;
	bool waker = false;

	if (kind >= REC_KIND_CNT || !len || frames[0] == ';' || frames[len - 1] == ';' ||
	    memmem(frames, len, ";;", 2))
		return -EINVAL; /* an empty frame: refused before anything is added */
	add_weight(&fl->nodes[0], kind, after, before, gone);
	fl->kind_total[kind] = sat_add(fl->kind_total[kind], after);
	fl->kind_before[kind] = sat_add(fl->kind_before[kind], before);
	if (idle_from != SIZE_MAX)
		fl->idle_total = sat_add(fl->idle_total, after);
	for (size_t i = 0; p <= end; i++) {
		const char *semi = memchr(p, ';', end - p);
		size_t n = (semi ? semi : end) - p;
		long c;

		c = child(fl, cur, i >= idle_from, p, n, false);
		if (c == -ENOSPC) {
			/*
			 * The rest of the stack's weight in one frame under the last
			 * one the tree has: at most one (two with idle) per node, so
			 * the tree stays under 3 * max_nodes and every total exact.
			 */
			c = child(fl, cur, i >= idle_from, FLAME_TRUNCATED,
				  strlen(FLAME_TRUNCATED), true);
			if (c < 0)
				return c;
			add_weight(&fl->nodes[c], kind, after, before, gone);
			fl->nodes[c].waker |= waker;
			fl->stacks_merged++;
			cur = c;
			break;
		}
		if (c < 0)
			return c;
		cur = c;
		add_weight(&fl->nodes[cur], kind, after, before, gone);
		fl->nodes[cur].waker |= waker;
		if (n == 2 && !memcmp(p, "--", 2))
			waker = true; /* what follows is who woke the thread */
		if (!semi)
			break;
		p = semi + 1;
	}
	fl->last = cur;
	return 0;
}

static const struct flame_node *sort_nodes;

static int cmp_child(const void *a, const void *b)
{
	const struct flame_node *x = &sort_nodes[*(const __u32 *)a];
	const struct flame_node *y = &sort_nodes[*(const __u32 *)b];

	if (x->idle != y->idle)
		return x->idle ? 1 : -1; /* idle threads to the right of busy ones */
	return strcmp(x->name, y->name);
}

int flame__finish(struct flame *fl)
{
	__u32 *kids = malloc(fl->nr * sizeof(*kids));

	if (!kids)
		return -ENOMEM;
	sort_nodes = fl->nodes;
	for (size_t i = 0; i < fl->nr; i++) {
		__u32 c = fl->nodes[i].first_child;
		size_t n = 0;

		for (; c != FLAME_NONE; c = fl->nodes[c].next_sibling)
			kids[n++] = c;
		qsort(kids, n, sizeof(*kids), cmp_child);
		fl->nodes[i].first_child = n ? kids[0] : FLAME_NONE;
		for (size_t k = 0; k < n; k++)
			fl->nodes[kids[k]].next_sibling = k + 1 < n ? kids[k + 1] : FLAME_NONE;
	}
	sort_nodes = NULL;
	free(kids);
	return 0;
}

enum rec_kind flame__kind(const struct flame_node *n)
{
	enum rec_kind best = REC_OTHER;

	for (int k = 0; k < REC_KIND_CNT; k++)
		if (n->w[k] > n->w[best])
			best = k;
	return best;
}
