// SPDX-License-Identifier: GPL-2.0-only
/*
 * A profile's lines named (profile_priv.h): each weighed line's tag, ids,
 * thread name and stacks as frames (inlined calls, origins for pprof, cut
 * walks), added to the output; and the long blocks' stacks, named the same.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "irqname.h"
#include "longblocks.h"
#include "profile.h"
#include "profile_priv.h"
#include "pyproc.h"
#include "safestr.h"
#include "util.h"

static const char *const state_tags[WPROF_STATE_CNT] = {
	[WPROF_ON_CPU] = "on-cpu",
	[WPROF_OFF_SLEEP] = "off-cpu:sleep",
	[WPROF_OFF_DISK] = "off-cpu:disk",
	[WPROF_OFF_RUNQ] = "off-cpu:runqueue",
	[WPROF_STEAL] = "steal",
	[WPROF_OFF_THROTTLED] = "off-cpu:runqueue:throttled",
};

/* The frame a user walk that stopped early ends with (see enum wprof_cut). */
static const char *cut_name(__u64 ip)
{
	static const char *const names[WPROF_CUT_CNT] = {
		[WPROF_CUT_NO_TABLE] = "[frame pointers only: code not loaded yet]",
		[WPROF_CUT_NO_CODE] = "[cut: return address not in code]",
		[WPROF_CUT_BAD_RULE] = "[cut: unsupported unwind rule]",
		[WPROF_CUT_READ] = "[cut: stack unreadable]",
		[WPROF_CUT_LOOP] = "[cut: stack loops]",
		[WPROF_CUT_DEPTH] = "[cut: too deep]",
		[WPROF_CUT_COPY] = "[cut: past the stack copied]",
	};
	__u64 cut = ip - WPROF_FRAME_CUT;

	return cut < WPROF_CUT_CNT && names[cut] ? names[cut] : "[cut]";
}

static bool is_tracing_frame(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "trace_call_bpf",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static char *next_name(struct builder *b)
{
	return b->nr < MAX_FRAMES ? b->names[b->nr++] : NULL;
}

static void put_name(struct builder *b, const char *name)
{
	char *n = next_name(b);

	if (n)
		snprintf(n, NAME_LEN, "%s", name);
}

/*
 * Note that the frames @names[0..@n) of @pid came from @so (NULL: no file's),
 * as the lines will hold them. Failing (ENOMEM) only costs pprof a mapping.
 */
static void note_origin(struct builder *b, __u32 pid, char (*names)[NAME_LEN], int n,
			const struct sym_origin *so)
{
	char clean[SAFESTR_SIZE(NAME_LEN)];

	if (!so || !opts__frame_origins(b->o))
		return;
	if (so != b->last_origin) {
		b->last_idx = origins__add(&b->p->origins, so->path, so->build_id);
		b->last_origin = b->last_idx < 0 ? NULL : so;
	}
	if (b->last_idx < 0)
		return;
	for (int i = 0; i < n; i++) {
		folded__sanitize(clean, sizeof(clean), names[i]);
		origins__note(&b->p->origins, pid, clean, strlen(clean), b->last_idx);
	}
}

/*
 * A user frame and the calls inlined at it, as frames of their own: the
 * outer function first when root first. Returns symbolizer__user()'s
 * verdict on the outer name, or -1 when nothing fit.
 */
static int add_inlined(struct builder *b, __u32 pid, __u64 ip, bool leaf_first)
{
	int room = MAX_FRAMES - (int)b->nr, n, ret;
	char name[NAME_LEN];

	if (room <= 0)
		return -1;
	n = symbolizer__user_frames(b->sym, pid, ip, true, &b->names[b->nr], room);
	if (n <= 0)
		return -1;
	if (leaf_first) /* the innermost call first */
		for (int i = 0; i < n / 2; i++) {
			memcpy(name, b->names[b->nr + i], NAME_LEN);
			memcpy(b->names[b->nr + i], b->names[b->nr + n - 1 - i], NAME_LEN);
			memcpy(b->names[b->nr + n - 1 - i], name, NAME_LEN);
		}
	ret = symbolizer__user(b->sym, pid, ip, name, sizeof(name));
	note_origin(b, pid, &b->names[b->nr], n, symbolizer__user_origin(b->sym, pid, ip));
	b->nr += n;
	return ret;
}

/*
 * User frame @ip (a return address unless @leaf: named at ip - 1, so that a
 * call at a function's end is not given to the next function).
 */
static void add_user_frame(struct builder *b, __u32 pid, __u64 ip, bool leaf, bool leaf_first)
{
	char *name = b->names[b->nr];
	int ret;

	if (b->nr >= MAX_FRAMES || WPROF_IS_HELD(ip))
		return; /* held: not one of session__stack()'s, never a frame */
	if (ip >= WPROF_FRAME_CUT) {
		snprintf(name, NAME_LEN, "%s", cut_name(ip));
		b->nr++;
		return;
	}
	ip -= !leaf;
	if (b->o->inlines) {
		ret = add_inlined(b, pid, ip, leaf_first);
		if (ret < 0)
			return;
		b->p->frames_total++;
		b->p->frames_unnamed += ret != 0;
		return;
	}
	ret = symbolizer__user(b->sym, pid, ip, name, NAME_LEN);
	note_origin(b, pid, &b->names[b->nr], 1, symbolizer__user_origin(b->sym, pid, ip));
	b->p->frames_total++;
	if (ret != 0)
		b->p->frames_unnamed++;
	b->nr++;
}

/* The native frame of the interpreter that runs Python frames (3.11 on). */
#define PY_EVAL_FRAME "_PyEval_EvalFrameDefault"
#define PY_MAX_PARTS (2 * WPROF_MAX_STACK_DEPTH)

/* A part of a user stack with Python frames: a word of it, native or Python. */
struct py_part {
	int i;       /* its index in the stack */
	bool python; /* a Python frame's (or cut's) word */
};

/* Append Python frames [@from, @to) of @st (their WPROF_FRAME_PY words' indexes in @frames). */
static int put_segment(struct py_part *parts, int nr, const int *frames, int from, int to)
{
	for (int f = from; f < to && nr < PY_MAX_PARTS; f++)
		parts[nr++] = (struct py_part){ .i = frames[f], .python = true };
	return nr;
}

/*
 * A user stack with Python frames before its native ones (include/wprof.h:
 * WPROF_FRAME_PY), @py how many Python words: each _PyEval_EvalFrameDefault
 * frame, from the leaf, is replaced by the Python frames its activation ran.
 * Activations whose native frame is not in the stack (cut off, or not named)
 * go above the rootmost one, or above the native frames if none is, and a
 * cut of the Python frames above them all.
 */
static void add_py_stack(struct builder *b, __u32 pid, const struct wprof_stack *st, int py,
			 bool leaf_first)
{
	struct pyproc *pp = session__python(b->s);
	int frames[WPROF_MAX_STACK_DEPTH], seg[WPROF_MAX_STACK_DEPTH + 1];
	int nf = 0, nseg = 0, e = 0, nr = 0, cut = -1, evals = 0;
	struct py_part parts[PY_MAX_PARTS];
	char name[NAME_LEN];

	/* the Python frames, leaf first, and where each activation's begin */
	seg[0] = 0;
	for (int i = 0; i < py && nf < WPROF_MAX_STACK_DEPTH; i++) {
		__u64 w = st->ips[i];

		if (WPROF_PY_KIND(w) == WPROF_FRAME_PY_CUT >> 48)
			cut = i;
		if (WPROF_PY_KIND(w) != WPROF_FRAME_PY >> 48)
			continue;
		frames[nf++] = i;
		if (w & WPROF_PY_ENTRY) /* the activation's first frame: the next begins after it */
			seg[++nseg] = nf;
	}
	if (seg[nseg] < nf) /* the rootmost activation's first frame was not reached */
		seg[++nseg] = nf;
	for (int j = py; j < (int)st->nr; j++) {
		__u64 ip = st->ips[j];

		evals += ip < WPROF_FRAME_CUT && !WPROF_IS_HELD(ip) &&
			 !symbolizer__user(b->sym, pid, ip - (j > py), name, sizeof(name)) &&
			 !strcmp(name, PY_EVAL_FRAME);
	}
	for (int j = py; j < (int)st->nr && nr < PY_MAX_PARTS; j++) {
		__u64 ip = st->ips[j];
		bool eval = e < nseg && ip < WPROF_FRAME_CUT && !WPROF_IS_HELD(ip) &&
			    !symbolizer__user(b->sym, pid, ip - (j > py), name, sizeof(name)) &&
			    !strcmp(name, PY_EVAL_FRAME);

		if (!eval) {
			parts[nr++] = (struct py_part){ .i = j };
			continue;
		}
		/* the rootmost one also takes the activations left */
		nr = put_segment(parts, nr, frames, seg[e], seg[e + 1 == evals ? nseg : e + 1]);
		e = e + 1 == evals ? nseg : e + 1;
	}
	if (e < nseg)
		nr = put_segment(parts, nr, frames, seg[e], seg[nseg]);
	if (cut >= 0 && nr < PY_MAX_PARTS)
		parts[nr++] = (struct py_part){ .i = cut, .python = true };
	for (int n = 0; n < nr && b->nr < MAX_FRAMES; n++) {
		const struct py_part *p = &parts[leaf_first ? n : nr - 1 - n];

		if (!p->python) {
			add_user_frame(b, pid, st->ips[p->i], p->i == py, leaf_first);
			continue;
		}
		b->p->frames_total++;
		b->p->frames_unnamed += pyproc__frame_name(pp, st->ips[p->i],
				   p->i + 1 < (int)st->nr &&
						   WPROF_PY_KIND(st->ips[p->i + 1]) == WPROF_FRAME_PY_AT >> 48 ?
					   st->ips[p->i + 1] : 0,
				   name, sizeof(name));
		put_name(b, name);
	}
}

/*
 * Append the names of stack `id` (leaf first in the map), root first unless
 * `leaf_first`. Return addresses point after the call: name ip - 1 so a call
 * at a function's end is not given to the next function.
 */
static void add_stack(struct builder *b, __u32 pid, __u64 id, bool kernel, bool leaf_first)
{
	struct wprof_stack *st = &b->stack;
	int first = 0;

	if (!id)
		return;
	if (session__stack(b->s, id, !kernel, st)) {
		b->p->stacks_missing++;
		return;
	}
	if (!kernel) {
		int py = 0;

		while (py < (int)st->nr && WPROF_IS_PY_WORD(st->ips[py]))
			py++;
		if (py) {
			add_py_stack(b, pid, st, py, leaf_first);
			return;
		}
		for (int n = 0; n < (int)st->nr && b->nr < MAX_FRAMES; n++) {
			int i = leaf_first ? n : (int)st->nr - 1 - n;

			add_user_frame(b, pid, st->ips[i], i == 0, leaf_first);
		}
		return;
	}
	/* the tracing machinery sits at the leaf of switch-time stacks */
	for (; first < (int)st->nr; first++) {
		char name[NAME_LEN];

		symbolizer__kernel(b->sym, st->ips[first], name, sizeof(name));
		if (!is_tracing_frame(name))
			break;
	}
	for (int n = 0; n < (int)st->nr - first && b->nr < MAX_FRAMES; n++) {
		int i = leaf_first ? first + n : (int)st->nr - 1 - n;
		__u64 ip = st->ips[i] - (i > first ? 1 : 0);
		char *name = b->names[b->nr];

		/*
		 * The kernel leaves the scheduler and lock code out of a
		 * sleeping task's stack (threads blocked when the window
		 * opens): leave it out of every stack, so that one wait is
		 * one stack.
		 */
		if (symbolizer__kernel_is_sched(b->sym, st->ips[i]))
			continue;
		if (symbolizer__kernel(b->sym, ip, name, NAME_LEN - 4))
			b->p->frames_unnamed++;
		strcat(name, "_[k]");
		note_origin(b, ORIGIN_ANY_PID, &b->names[b->nr], 1, symbolizer__kernel_origin(b->sym));
		b->p->frames_total++;
		b->nr++;
	}
}

/*
 * A waker's frames, leaf first, and its name: its kernel stack, then its
 * user stack and command name, or, when its kernel frames are an
 * interrupt's, what the interrupt did (irqname.h): the task it landed on
 * did not wake anyone.
 */
static void add_waker(struct builder *b, __u32 pid, __u64 ustack_id, __u64 kstack_id,
		      const char comm[WPROF_COMM_LEN])
{
	char name[WPROF_COMM_LEN + 16];
	struct irq_seen seen = {};
	size_t from = b->nr;

	add_stack(b, 0, kstack_id, true, true);
	for (size_t i = from; i < b->nr; i++)
		irqname__see(&seen, b->names[i]);
	if (irqname__make(&seen, name, sizeof(name))) {
		put_name(b, name);
		return;
	}
	add_stack(b, pid, ustack_id, false, true);
	memcpy(name, comm, WPROF_COMM_LEN);
	name[WPROF_COMM_LEN] = '\0';
	put_name(b, name);
}

static const char *tag_of(const struct record_opts *o, __u32 state)
{
	/* --no-states folds the off-CPU states; steal is none of them */
	return state != WPROF_ON_CPU && state != WPROF_STEAL && o->no_states ? "off-cpu" :
										 state_tags[state];
}

/* Start a line: TAG (unless at the leaf), [PID, TID for json], COMM, stacks. */
static void begin(struct builder *b, const struct wprof_key *k, const struct thread_acct *t)
{
	char num[16];

	b->nr = 0;
	if (!b->o->tag_leaf)
		put_name(b, tag_of(b->o, k->state));
	if (opts__line_ids(b->o)) {
		snprintf(num, sizeof(num), "%u", k->pid);
		put_name(b, num);
		snprintf(num, sizeof(num), "%u", k->tid);
		put_name(b, num);
	}
	put_name(b, t->comm);
	add_stack(b, k->pid, k->ustack_id, false, false);
	add_stack(b, k->pid, k->kstack_id, true, false);
}

/* End a line and add it, its time in the slices its key says (none: not known). */
static int end(struct builder *b, const struct wprof_key *k, size_t prefix, __u64 us,
	       __u64 count, __u64 max_us)
{
	const char *frames[MAX_FRAMES];
	struct folded_piece piece = {
		.slice = k->slice, .span = k->span, .weight = us, .count = count, .max = max_us,
	};

	if (b->nr == prefix)
		put_name(b, "[no stack]");
	if (b->o->tag_leaf)
		put_name(b, tag_of(b->o, k->state));
	for (size_t i = 0; i < b->nr; i++)
		frames[i] = b->names[i];
	return folded__add_piece(b->out, frames, b->nr, &piece);
}

static size_t prefix_len(const struct builder *b)
{
	return !b->o->tag_leaf + 1 + (opts__line_ids(b->o) ? 2 : 0);
}

/* Pass 3: symbolize every line and add it with its weight. */
int builder_emit_line(struct builder *b, const struct line *l)
{
	const struct wprof_wake_key *k = &l->k;
	const struct thread_acct *t =
		profile_find_thread(b->p, k->blocked.tid, k->blocked.start_id);

	if (!t)
		return -ENOENT; /* every line's thread was found or made when it was added */
	begin(b, &k->blocked, t);
	if (l->unwalked)
		put_name(b, t->lost_lines ? "[stacks lost: map full]" : "[not walked]");
	if (!l->wake)
		/* steal a sample measured that rounds to nothing: no line of count 0 */
		return l->us || l->count || k->blocked.state != WPROF_STEAL ?
			       end(b, &k->blocked, prefix_len(b), l->us, l->count, l->max_us) : 0;
	/* the blocked stack, "--", the waker's stacks leaf first, its name */
	if (b->nr == prefix_len(b))
		put_name(b, "[no stack]");
	put_name(b, "--");
	add_waker(b, k->waker_pid, k->waker_ustack_id, k->waker_kstack_id, k->waker_comm);
	return end(b, &k->blocked, 0, l->us, l->count, l->max_us);
}

/*
 * A thread that ran without being sampled (shorter than a sampling period,
 * or unlucky) still shows its on-CPU time: count 0, no stack.
 */
int builder_emit_unsampled(struct builder *b, const struct thread_acct *t)
{
	struct wprof_key k = {
		.pid = t->pid, .tid = t->tid, .start_id = t->start_id, .state = WPROF_ON_CPU,
	};
	int err = 0;

	b->p->unsampled_threads++;
	b->p->unsampled_us += t->on_us + t->off_us[WPROF_STEAL];
	for (int i = 0; i < 2 && !err; i++) {
		__u64 us = i ? t->off_us[WPROF_STEAL] : t->on_us;

		k.state = i ? WPROF_STEAL : WPROF_ON_CPU;
		if (!us)
			continue;
		begin(b, &k, t);
		put_name(b, "[unsampled]");
		err = end(b, &k, prefix_len(b), us, 0, 0);
	}
	return err;
}

/* The names b->names[from..b->nr), sanitized and joined by ';', into a new string. */
static char *join_names(struct builder *b, size_t from)
{
	char clean[SAFESTR_SIZE(NAME_LEN)];
	size_t len = 0, n;
	char *out = NULL, *grown;

	for (size_t i = from; i < b->nr; i++) {
		folded__sanitize(clean, sizeof(clean), b->names[i]);
		n = strlen(clean);
		grown = realloc(out, len + n + 2);
		if (!grown) {
			free(out);
			return NULL;
		}
		out = grown;
		if (len)
			out[len++] = ';';
		memcpy(out + len, clean, n + 1);
		len += n;
	}
	return out;
}

/*
 * A long block's frames, as its line has them (no tag, no name), and its
 * waker's. Not counted in the frame counters: its line's frames are.
 */
static int resolve_block(struct builder *b, struct long_block *lb)
{
	const struct wprof_long_block *k = &lb->b;
	__u64 total = b->p->frames_total, unnamed = b->p->frames_unnamed;
	__u64 missing = b->p->stacks_missing;

	symbolizer__quiet(b->sym, true);
	b->nr = 0;
	add_stack(b, k->pid, k->ustack_id, false, false);
	add_stack(b, k->pid, k->kstack_id, true, false);
	if (!b->nr)
		put_name(b, "[no stack]");
	lb->stack = join_names(b, 0);
	if (lb->stack && (k->waker_ustack_id || k->waker_kstack_id)) {
		b->nr = 0;
		add_waker(b, k->waker_pid, k->waker_ustack_id, k->waker_kstack_id, k->waker_comm);
		lb->waker = join_names(b, 0);
	}
	symbolizer__quiet(b->sym, false);
	b->p->frames_total = total;
	b->p->frames_unnamed = unnamed;
	b->p->stacks_missing = missing;
	lb->resolved = true;
	return lb->stack ? 0 : -ENOMEM;
}

/*
 * Name the long blocks of the threads whose lines are being made (all of
 * them: @all), while their processes' files are still known; leave out
 * those of threads not selected.
 */
int builder_resolve_blocks(struct builder *b, bool all)
{
	struct longblocks *lbs = session__long_blocks(b->s);
	int err = 0;

	session__consume_blocks(b->s);
	for (size_t i = 0; i < longblocks__nr(lbs) && !err; i++) {
		struct long_block *lb = longblocks__at(lbs, i);
		const struct thread_acct *t = profile_find_thread(b->p, lb->b.tid, lb->b.start_id);

		if (lb->resolved || lb->gone || (!all && (!t || t->retired)))
			continue;
		if (t && !t->selected) {
			lb->gone = true;
			continue;
		}
		if (t)
			memcpy(lb->comm, t->comm, sizeof(lb->comm));
		else
			snprintf(lb->comm, sizeof(lb->comm), "tid-%u", lb->b.tid);
		err = resolve_block(b, lb);
	}
	longblocks__sweep(lbs);
	return err;
}
