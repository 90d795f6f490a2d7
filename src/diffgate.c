// SPDX-License-Identifier: GPL-2.0-only
/*
 * `wprof diff --fail-if-grown`: what grew, judged by code path and by
 * function, in the measure of the diff (diff.h).
 *
 * A regression spread over many threads grows each thread's stack a little
 * and their code path a lot; one spread over many leaves (a slower callee
 * called from everywhere) grows no stack much but its callers' paths and
 * the function itself. So every prefix of every stack (a code path: the
 * time of all stacks under it) and every function (its time in all its
 * callers, each stack counted once, as pprof's cum) are judged, each kind
 * of time apart. Growth is in percent of BEFORE's whole, so that a fix
 * (less time somewhere) makes nothing else grow, as a share would.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "strmap.h"
#include "util.h"

/* The gate names this many code paths and this many functions, then counts the rest. */
#define GATE_NAMED 5

struct gate_item {
	__u64 w[2];
	__u64 waits;           /* BEFORE's weight in waits that the load may lengthen */
	double growth;         /* % of BEFORE's whole */
	size_t parent;         /* paths: the path one frame shorter, or SIZE_MAX */
	size_t stack, len;     /* paths: the first len bytes of norm[stack] */
	char *name;            /* functions: the frame */
	enum rec_kind kind;
	size_t depth;          /* functions: the shallowest it was seen at */
	size_t seen;           /* functions: the last stack counted, + 1 */
	size_t best[2];        /* paths: the two paths one frame longer that grew most */
	bool over, child_over; /* paths: it, or a longer path under it, grew too much */
	bool on_path;          /* functions: a frame of a path named */
};

struct gate {
	const struct diff *d;
	char **norm; /* each stack with its tag at the root */
	enum rec_kind *kinds;
	struct gate_item *paths, *funcs;
	size_t nr_paths, cap_paths, nr_funcs, cap_funcs;
	struct strmap *path_idx, *func_idx;
	/*
	 * Two runs of -- CMD: how much longer AFTER's threads waited for a
	 * CPU (us, 0 when not), and how much longer the command ran (AFTER's
	 * elapsed time over BEFORE's, less 1; 0 when not longer).
	 */
	double more_cpu_wait_us, longer_by;
	double run_before_us, run_longer_us; /* the command's elapsed time, how much longer */
	double whole;            /* BEFORE's time of the kinds judged, in the measure's units */
	double waits_before_us; /* BEFORE's time in such waits, of the kinds judged */
	bool *waits;            /* by stack: a wait that the load may lengthen */
};

bool diff__is_cmd(const char *target, const char *program, const char *cmdline)
{
	size_t n = strlen(program);
	const char *p = cmdline;

	/* -p and -a name a pid or "every thread"; -- CMD its command line, from the program */
	if (!n || strncmp(target, program, n) || !strncmp(target, "pid ", 4) ||
	    !strncmp(target, "tid ", 4))
		return false;
	/* a command cut short by -d is a window, not a fixed amount of work */
	while (p && *p) {
		size_t len = strcspn(p, " ");

		if ((len == 2 && !strncmp(p, "--", 2)) || (len == n && !strncmp(p, program, n)))
			break;
		if ((len >= 2 && !strncmp(p, "-d", 2)) || !strncmp(p, "--duration", 10))
			return false;
		p += len;
		p += *p == ' ';
	}
	return true;
}

int diff__parse_states(const char *s, unsigned *mask)
{
	static const struct {
		const char *name;
		unsigned bits;
	} names[] = {
		{ "on-cpu", 1u << REC_ON_CPU },
		{ "sleep", 1u << REC_SLEEP },
		{ "disk", 1u << REC_DISK },
		{ "runqueue", (1u << REC_RUNQ) | (1u << REC_THROTTLED) },
		{ "steal", 1u << REC_STEAL },
		{ "off-cpu", (1u << REC_SLEEP) | (1u << REC_DISK) | (1u << REC_RUNQ) |
				     (1u << REC_THROTTLED) | (1u << REC_OFF) },
		{ "all", (1u << REC_KIND_CNT) - 1 },
	};
	const char *p = s;

	*mask = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
				break;
		if (i == ARRAY_SIZE(names) || !len) {
			pr_err("invalid --states '%s': expected a list of on-cpu, sleep, disk, "
			       "runqueue, steal, off-cpu or all, e.g. off-cpu", s);
			return -EINVAL;
		}
		*mask |= names[i].bits;
		p += len;
		p += *p == ',';
	}
	if (!*mask) {
		pr_err("invalid --states '%s': give at least one kind of time", s);
		return -EINVAL;
	}
	return 0;
}

/* @stack with its tag frame first (moved from the leaf), malloc'd; its kind in *@kind. */
static char *normalize(const char *stack, enum rec_kind *kind)
{
	size_t len = strlen(stack);
	const char *semi = strchr(stack, ';'), *last = strrchr(stack, ';');
	char *out;

	*kind = rec_kind__of(stack, semi ? (size_t)(semi - stack) : len);
	if (*kind != REC_OTHER || !last)
		return strdup(stack);
	*kind = rec_kind__of(last + 1, strlen(last + 1));
	if (*kind == REC_OTHER)
		return strdup(stack);
	out = malloc(len + 1);
	if (out)
		snprintf(out, len + 1, "%s;%.*s", last + 1, (int)(last - stack), stack);
	return out;
}

static int add_path(struct gate *g, size_t stack, size_t len, size_t parent, size_t *out)
{
	__u64 idx;
	int ret = strmap__intern(g->path_idx, g->norm[stack], len, g->nr_paths, &idx);

	if (ret < 0)
		return ret;
	if (ret == 1) {
		if (array_reserve(&g->paths, &g->cap_paths, g->nr_paths, sizeof(*g->paths), 1024))
			return -ENOMEM;
		memset(&g->paths[g->nr_paths], 0, sizeof(*g->paths));
		g->paths[g->nr_paths].stack = stack;
		g->paths[g->nr_paths].len = len;
		g->paths[g->nr_paths].parent = parent;
		g->paths[g->nr_paths].kind = g->kinds[stack];
		g->nr_paths++;
	}
	*out = idx;
	return 0;
}

/* The function @frame (@len bytes) of kind @kind, made when new: its index, or -ENOMEM. */
static long func_of(struct gate *g, enum rec_kind kind, const char *frame, size_t len)
{
	char key[1024];
	int n = snprintf(key, sizeof(key), "%d;%.*s", kind, (int)len, frame);
	__u64 idx;
	int ret;

	if (n >= (int)sizeof(key))
		n = sizeof(key) - 1;
	ret = strmap__intern(g->func_idx, key, n, g->nr_funcs, &idx);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		if (array_reserve(&g->funcs, &g->cap_funcs, g->nr_funcs, sizeof(*g->funcs), 256))
			return -ENOMEM;
		memset(&g->funcs[g->nr_funcs], 0, sizeof(*g->funcs));
		g->funcs[g->nr_funcs].name = strndup(frame, len);
		if (!g->funcs[g->nr_funcs].name)
			return -ENOMEM;
		g->funcs[g->nr_funcs].kind = kind;
		g->funcs[g->nr_funcs].depth = SIZE_MAX;
		g->nr_funcs++;
	}
	return idx;
}

/* Every path and function of stack @i, with its weights. */
static int add_stack(struct gate *g, size_t i)
{
	const struct diff_stack *s = &g->d->stacks[i];
	const char *norm = g->norm[i], *p = norm;
	bool tagged = g->kinds[i] != REC_OTHER;
	/* the frame that names a thread (or process, or pool) is no function */
	size_t name_at = g->d->group == GROUP_NONE ? SIZE_MAX : tagged ? 1 : 0;
	size_t parent = SIZE_MAX, depth = 0;

	for (;;) {
		size_t len = strcspn(p, ";"), path;
		int err = add_path(g, i, p + len - norm, parent, &path);

		if (err)
			return err;
		for (int side = DIFF_BEFORE; side <= DIFF_AFTER; side++)
			g->paths[path].w[side] += s->w[side];
		if (g->waits[i])
			g->paths[path].waits += s->w[DIFF_BEFORE];
		if ((depth > 0 || !tagged) && depth != name_at) {
			long f = func_of(g, g->kinds[i], p, len);

			if (f < 0)
				return f;
			/* a recursive function's time counts once a stack */
			if (g->funcs[f].seen != i + 1) {
				g->funcs[f].seen = i + 1;
				for (int side = DIFF_BEFORE; side <= DIFF_AFTER; side++)
					g->funcs[f].w[side] += s->w[side];
				if (g->waits[i])
					g->funcs[f].waits += s->w[DIFF_BEFORE];
			}
			if (depth < g->funcs[f].depth)
				g->funcs[f].depth = depth;
		}
		parent = path;
		depth++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/*
 * On a busy machine a run of the same work takes longer: its threads wait
 * for CPUs (runqueue time, not judged by default), and a thread that waits
 * for them (a join, a lock, a reply) waits as much longer, in a state that
 * is judged. So the waits of a path that was there before may grow as the
 * command's run did, by no more than their part of the threads' extra wait
 * for CPUs: the machine's share. A path that is new gets nothing (no load
 * makes code run that did not), nor does time on a CPU or a timed sleep
 * (nanosleep: its length is the program's), which a busy machine does not
 * lengthen.
 */
static double load_allowance(const struct gate *g, const struct gate_item *it)
{
	/*
	 * each thread's worth of waiting (a join waits the whole run, less the
	 * start) may grow as the run did
	 */
	double lives = g->run_before_us ? it->waits / g->run_before_us : 0;
	double a = (lives > (long)lives ? (long)lives + 1 : (long)lives) * g->run_longer_us;
	/* the extra wait is shared by the waits as their time was: no path has it all */
	double share = g->waits_before_us ?
			       g->more_cpu_wait_us * it->waits / g->waits_before_us : 0;

	return a < share ? a : share;
}

/* Whether stack @i is a wait that others' waits for a CPU may lengthen. */
static bool load_waits(const struct gate *g, size_t i)
{
	enum rec_kind k = g->kinds[i];

	return (k == REC_SLEEP || k == REC_DISK || k == REC_OFF) &&
	       !strstr(g->norm[i], "nanosleep");
}

static double growth(const struct gate *g, const struct gate_item *it)
{
	const struct diff *d = g->d;
	double grew = diff__value(d, DIFF_AFTER, it->w[DIFF_AFTER]) -
		      diff__value(d, DIFF_BEFORE, it->w[DIFF_BEFORE]);

	grew -= load_allowance(g, it);
	return 100 * grew / g->whole;
}

/* Both sides ran -- CMD, compared in time: what the machine's load may explain. */
static void load_of(struct gate *g)
{
	const struct diff *d = g->d;
	const struct diff_side *b = &d->side[DIFF_BEFORE], *a = &d->side[DIFF_AFTER];
	double wait[2] = { 0, 0 };

	if (d->measure != DIFF_TIME || !b->cmd || !a->cmd || !b->window_ns ||
	    a->window_ns <= b->window_ns)
		return;
	for (size_t i = 0; i < d->nr; i++)
		if (g->kinds[i] == REC_RUNQ || g->kinds[i] == REC_THROTTLED ||
		    g->kinds[i] == REC_STEAL)
			for (int side = DIFF_BEFORE; side <= DIFF_AFTER; side++)
				wait[side] += d->stacks[i].w[side];
	if (wait[DIFF_AFTER] <= wait[DIFF_BEFORE])
		return;
	g->more_cpu_wait_us = wait[DIFF_AFTER] - wait[DIFF_BEFORE];
	g->longer_by = (double)a->window_ns / b->window_ns - 1;
	g->run_before_us = b->window_ns / 1e3;
	g->run_longer_us = (a->window_ns - b->window_ns) / 1e3;
	pr_info("AFTER's threads waited %.3f s more for a CPU (the machine's load), the command "
		"ran %.0f%% longer: paths there before may grow as much, up to that",
		g->more_cpu_wait_us / 1e6, 100 * g->longer_by);
}

/* "on-CPU", "off-CPU sleep", ...: the kind of time in words. */
static void kind_words(char *buf, size_t size, enum rec_kind k)
{
	switch (k) {
	case REC_SLEEP:
	case REC_DISK:
	case REC_RUNQ:
	case REC_THROTTLED:
		snprintf(buf, size, "off-CPU %s", rec_kind__label(k));
		break;
	case REC_OTHER:
		snprintf(buf, size, "time");
		break;
	default:
		snprintf(buf, size, "%s", rec_kind__label(k));
	}
}

/* "1.234 s", "1.234 s per s", "12.34%". */
static void fmt_value(char *buf, size_t size, const struct diff *d, int side, __u64 w)
{
	double v = diff__value(d, side, w);

	if (d->measure == DIFF_SHARE)
		snprintf(buf, size, "%.2f%%", v);
	else
		snprintf(buf, size, "%.3f s%s", v / 1e6, d->measure == DIFF_RATE ? " per s" : "");
}

static void name_item(const struct gate *g, const struct gate_item *it, bool path, double pct)
{
	const struct diff *d = g->d;
	char kind[64], b[64], a[64], whole[64];
	const char *frames = path ? g->norm[it->stack] : it->name;
	int len = path ? (int)it->len : (int)strlen(it->name);

	/* a path's tag is said in words */
	if (path && it->kind != REC_OTHER) {
		size_t skip = strcspn(frames, ";");

		skip += frames[skip] == ';';
		frames += skip;
		len = len > (int)skip ? len - (int)skip : 0;
	}
	kind_words(kind, sizeof(kind), it->kind);
	fmt_value(b, sizeof(b), d, DIFF_BEFORE, it->w[DIFF_BEFORE]);
	fmt_value(a, sizeof(a), d, DIFF_AFTER, it->w[DIFF_AFTER]);
	if (d->measure == DIFF_SHARE)
		snprintf(whole, sizeof(whole), "+%.2f points of share, more than %g", it->growth,
			 pct);
	else
		snprintf(whole, sizeof(whole), "+%.1f%% of BEFORE's whole, more than %g%%",
			 it->growth, pct);
	if (path)
		pr_err("grew: %s in %.*s%s: %s -> %s (%s)", kind, len, frames,
		       len ? "" : "(all of it)", b, a, whole);
	else
		pr_err("grew: %s under %.*s, in all its callers: %s -> %s (%s)", kind, len, frames,
		       b, a, whole);
}

static const struct gate_item *sort_items;

/* Most grown first. */
static int cmp_paths(const void *x, const void *y)
{
	const struct gate_item *a = &sort_items[*(const size_t *)x];
	const struct gate_item *b = &sort_items[*(const size_t *)y];

	if (a->growth != b->growth)
		return a->growth > b->growth ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/*
 * The functions a developer looks at first: new ones, then those that grew
 * most for what they had; of equals, the one nearest the root (where the
 * new time enters: the caller of a lock, not the futex under it).
 */
static int cmp_funcs(const void *x, const void *y)
{
	const struct gate_item *a = &sort_items[*(const size_t *)x];
	const struct gate_item *b = &sort_items[*(const size_t *)y];
	double ra = a->w[DIFF_BEFORE] ? (double)a->w[DIFF_AFTER] / a->w[DIFF_BEFORE] : 1e300;
	double rb = b->w[DIFF_BEFORE] ? (double)b->w[DIFF_AFTER] / b->w[DIFF_BEFORE] : 1e300;
	size_t la = strlen(a->name), lb = strlen(b->name);
	/* the program's code before the kernel's, which every syscall passes */
	bool ka = la > 4 && !strcmp(a->name + la - 4, "_[k]");
	bool kb = lb > 4 && !strcmp(b->name + lb - 4, "_[k]");

	if (ka != kb)
		return ka ? 1 : -1;

	if (ra != rb)
		return ra > rb ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->growth != b->growth)
		return a->growth > b->growth ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Of @items, those @keep says, sorted by @cmp; NULL when out of memory. */
static size_t *pick(const struct gate_item *items, size_t nr, bool (*keep)(const struct gate_item *),
		    int (*cmp)(const void *, const void *), size_t *n)
{
	size_t *idx = malloc((nr + 1) * sizeof(*idx));

	*n = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < nr; i++)
		if (keep(&items[i]))
			idx[(*n)++] = i;
	sort_items = items;
	qsort(idx, *n, sizeof(*idx), cmp);
	sort_items = NULL;
	return idx;
}

static bool deepest_over(const struct gate_item *it)
{
	return it->over && !it->child_over;
}

static bool func_over(const struct gate_item *it)
{
	return it->over && !it->on_path;
}

/* The functions on the named path @it: their growth is said by it. */
static void mark_on_path(struct gate *g, const struct gate_item *it)
{
	const char *norm = g->norm[it->stack], *p = norm;
	size_t depth = 0;

	while ((size_t)(p - norm) < it->len) {
		size_t len = strcspn(p, ";");
		char key[1024];
		int n = snprintf(key, sizeof(key), "%d;%.*s", it->kind, (int)len, p);
		__u64 f;

		if (depth++ && n < (int)sizeof(key) && !strmap__get(g->func_idx, key, n, &f))
			g->funcs[f].on_path = true;
		if (!p[len])
			break;
		p += len + 1;
	}
}

/* Keep @child among the two paths under @parent that grew most. */
static void rank_child(struct gate *g, size_t parent, size_t child)
{
	struct gate_item *p = &g->paths[parent];
	double c = g->paths[child].growth;

	if (p->best[0] == SIZE_MAX || c > g->paths[p->best[0]].growth) {
		p->best[1] = p->best[0];
		p->best[0] = child;
	} else if (p->best[1] == SIZE_MAX || c > g->paths[p->best[1]].growth) {
		p->best[1] = child;
	}
}

/*
 * Where a path named grew, when the growth is spread under it (no longer
 * path grew too much alone): the two longer paths that grew most, each
 * followed down while most of its growth stays on one path.
 */
static void name_parts(struct gate *g, const struct gate_item *it)
{
	char b[64], a[64];

	for (int k = 0; k < 2; k++) {
		size_t c = it->best[k];
		const struct gate_item *p;
		const char *frames;
		size_t skip = 0;

		if (c == SIZE_MAX || g->paths[c].growth <= 0)
			continue;
		while (g->paths[c].best[0] != SIZE_MAX &&
		       g->paths[g->paths[c].best[0]].growth >= g->paths[c].growth / 2)
			c = g->paths[c].best[0];
		p = &g->paths[c];
		frames = g->norm[p->stack];
		if (p->kind != REC_OTHER) {
			skip = strcspn(frames, ";");
			skip += frames[skip] == ';';
		}
		fmt_value(b, sizeof(b), g->d, DIFF_BEFORE, p->w[DIFF_BEFORE]);
		fmt_value(a, sizeof(a), g->d, DIFF_AFTER, p->w[DIFF_AFTER]);
		pr_err("  %s in %.*s: %s -> %s (%+.1f%s)", k ? "and" : "most",
		       p->len > skip ? (int)(p->len - skip) : 0, frames + skip, b, a, p->growth,
		       g->d->measure == DIFF_SHARE ? " points" : "%");
	}
}

static long judge(struct gate *g, double pct)
{
	const struct gate_item *most = NULL;
	size_t *paths, *funcs, np = 0, nf = 0;
	long over;

	for (size_t i = 0; i < g->nr_paths; i++) {
		struct gate_item *it = &g->paths[i];

		it->growth = growth(g, it);
		it->over = it->growth > pct;
		it->best[0] = it->best[1] = SIZE_MAX;
		if (!most || it->growth > most->growth)
			most = it;
		if (it->over && it->parent != SIZE_MAX)
			g->paths[it->parent].child_over = true;
	}
	for (size_t i = 0; i < g->nr_paths; i++)
		if (g->paths[i].parent != SIZE_MAX)
			rank_child(g, g->paths[i].parent, i);
	for (size_t i = 0; i < g->nr_funcs; i++) {
		g->funcs[i].growth = growth(g, &g->funcs[i]);
		g->funcs[i].over = g->funcs[i].growth > pct;
	}
	paths = pick(g->paths, g->nr_paths, deepest_over, cmp_paths, &np);
	for (size_t i = 0; paths && i < np && i < GATE_NAMED; i++)
		mark_on_path(g, &g->paths[paths[i]]);
	funcs = paths ? pick(g->funcs, g->nr_funcs, func_over, cmp_funcs, &nf) : NULL;
	if (!funcs) {
		free(paths);
		return -ENOMEM;
	}
	for (size_t i = 0; i < np && i < GATE_NAMED; i++) {
		name_item(g, &g->paths[paths[i]], true, pct);
		name_parts(g, &g->paths[paths[i]]);
	}
	for (size_t i = 0; i < nf && i < GATE_NAMED; i++)
		name_item(g, &g->funcs[funcs[i]], false, pct);
	if (np > GATE_NAMED || nf > GATE_NAMED)
		pr_err("... and %zu more code paths, %zu more functions grew so",
		       np > GATE_NAMED ? np - GATE_NAMED : 0, nf > GATE_NAMED ? nf - GATE_NAMED : 0);
	over = np + nf;
	/* how near the limit a pass was, and where: what a CI log needs to set it */
	if (!over && most)
		pr_info("gate passed: the most grown code path grew %+.2f%s of BEFORE's whole (%s; "
			"at most %g allowed): %.*s", most->growth,
			g->d->measure == DIFF_SHARE ? " points" : "%",
			diff__measure_name(g->d->measure), pct, (int)most->len,
			g->norm[most->stack]);
	else if (!over)
		pr_info("gate passed: no time of the kinds judged (--states)");
	free(paths);
	free(funcs);
	return over;
}

long diff__gate(const struct diff *d, double pct, unsigned states)
{
	struct gate g = { .d = d };
	long ret = -ENOMEM;
	__u64 judged = 0;

	g.norm = calloc(d->nr + 1, sizeof(*g.norm));
	g.kinds = calloc(d->nr + 1, sizeof(*g.kinds));
	g.waits = calloc(d->nr + 1, sizeof(*g.waits));
	g.path_idx = strmap__new();
	g.func_idx = strmap__new();
	if (!g.norm || !g.kinds || !g.waits || !g.path_idx || !g.func_idx)
		goto out;
	for (size_t i = 0; i < d->nr; i++) {
		g.norm[i] = normalize(d->stacks[i].stack, &g.kinds[i]);
		if (!g.norm[i])
			goto out;
		if (!(states & (1u << g.kinds[i])))
			continue;
		judged += d->stacks[i].w[DIFF_BEFORE];
		g.waits[i] = load_waits(&g, i);
		if (g.waits[i])
			g.waits_before_us += d->stacks[i].w[DIFF_BEFORE];
		ret = add_stack(&g, i);
		if (ret)
			goto out;
	}
	/*
	 * growth in % of BEFORE's time of the kinds judged: the waits for a CPU
	 * left out of the judging are left out of the whole too, or a busy
	 * BEFORE would make every limit looser
	 */
	g.whole = d->measure == DIFF_SHARE ? 100 : diff__value(d, DIFF_BEFORE, judged);
	if (g.whole <= 0)
		g.whole = diff__whole(d);
	load_of(&g);
	ret = judge(&g, pct);
out:
	for (size_t i = 0; g.norm && i < d->nr; i++)
		free(g.norm[i]);
	for (size_t i = 0; i < g.nr_funcs; i++)
		free(g.funcs[i].name);
	free(g.norm);
	free(g.kinds);
	free(g.waits);
	free(g.paths);
	free(g.funcs);
	strmap__free(g.path_idx);
	strmap__free(g.func_idx);
	return ret;
}
