// SPDX-License-Identifier: GPL-2.0-only
/* Named targets' code, checked at every tick: see codewatch.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codewatch.h"
#include "hmap.h"
#include "procmaps.h"

/*
 * Ticks to let pass before the next check, at most: the wait doubles while
 * a process's code stays the same. The kernel checks code mappings one by
 * one, stepping over every other mapping between them (1 ms beside 5000
 * mappings here).
 */
#define WAIT_MAX_TICKS 8

/* A process's code as its last read of its mappings found it. */
struct code_seen {
	__u64 start; /* its start time */
	struct code_map *maps;
	size_t nr;
	unsigned int skip, wait; /* ticks to let pass; the last wait */
};

struct codewatch {
	struct hmap seen; /* pid -> struct code_seen */
	bool wait_while_same;
	bool no_query; /* the kernel has no PROCMAP_QUERY */
	/* what codewatch__same() asked, for codewatch__keep() */
	struct code_map *held;
	size_t nr_held;
	bool queried, again;
};

struct codewatch *codewatch__new(bool wait_while_same)
{
	struct codewatch *w = calloc(1, sizeof(*w));

	if (w)
		w->wait_while_same = wait_while_same;
	return w;
}

static void code_seen__free(struct code_seen *c)
{
	if (c)
		free(c->maps);
	free(c);
}

void codewatch__free(struct codewatch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->seen.cap; i++)
		code_seen__free(w->seen.slots[i].val);
	hmap__clear(&w->seen);
	free(w->held);
	free(w);
}

/* Whether @pid is the process of @c, with the code mappings held (asked just now). */
static bool unchanged(const struct codewatch *w, const struct code_seen *c, __u32 pid)
{
	__u64 start;

	return c && c->nr == w->nr_held &&
	       (!c->nr || !memcmp(c->maps, w->held, c->nr * sizeof(*c->maps))) &&
	       !procmaps__start_time(pid, &start) && start == c->start;
}

bool codewatch__same(struct codewatch *w, __u32 pid, bool again, __u64 *start)
{
	struct code_seen *c = hmap__get(&w->seen, pid, 0);
	int err;

	free(w->held);
	w->held = NULL;
	w->nr_held = 0;
	w->queried = false;
	w->again = again;
	if (again && c && c->skip) {
		c->skip--;
		*start = c->start;
		return true;
	}
	if ((!again && !c) || w->no_query)
		return false;
	err = procmaps__code_maps(pid, &w->held, &w->nr_held);
	w->queried = !err;
	if (err == -EOPNOTSUPP) /* a kernel before 6.11: never */
		w->no_query = true;
	if (!again || !w->queried || !unchanged(w, c, pid))
		return false;
	if (w->wait_while_same) {
		c->wait = c->wait ? c->wait * 2 : 1;
		if (c->wait > WAIT_MAX_TICKS)
			c->wait = WAIT_MAX_TICKS;
		c->skip = c->wait;
	}
	*start = c->start;
	return true;
}

void codewatch__keep(struct codewatch *w, __u32 pid, __u64 start, bool ok)
{
	struct code_seen *c = hmap__get(&w->seen, pid, 0);
	void *old;

	/* only the processes read at every tick are kept */
	if (!w->again && !c)
		return;
	if (!ok || !w->queried) { /* read in full at its next tick */
		code_seen__free(hmap__del(&w->seen, pid, 0));
		return;
	}
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || hmap__put(&w->seen, pid, 0, c, &old)) {
			free(c);
			return;
		}
	}
	free(c->maps);
	*c = (struct code_seen){ .start = start, .maps = w->held, .nr = w->nr_held };
	w->held = NULL;
	w->nr_held = 0;
	w->queried = false;
}
