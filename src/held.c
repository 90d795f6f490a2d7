// SPDX-License-Identifier: GPL-2.0-only
/* Held stacks, walked once their process's maps are read: see held.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "held.h"
#include "hmap.h"
#include "unwtab.h"
#include "util.h"

/*
 * How long a copy waits for its maps: user space reads a new process's maps
 * within milliseconds of the kernel's asking, and builds a file's tables in
 * well under a second; a copy whose maps did not come by then never will
 * (the process's code changed again since).
 */
#define HELD_WAIT_NS (5 * NSEC_PER_SEC)
/* Copies kept waiting at once, in bytes, and walks kept, at most */
#define HELD_MAX_BYTES (64ULL << 20)
#define HELD_MAX_ENTRIES (1U << 20)

struct held_entry {
	struct wprof_held *rec; /* the copy while it waits, else NULL */
	size_t rec_size;
	size_t wait_idx; /* in held.wait, while it waits */
	unsigned int unused; /* sweeps in a row that found its id unused (held__sweep()) */
	__u64 arrived_ns;
	struct wprof_stack *frames; /* walked (only its nr frames allocated), else NULL */
};

/* WPROF_HELD=check: a copy of a walk the kernel made, and its frames */
struct held_check {
	struct wprof_held rec;
	struct wprof_stack kst;
};
#define HELD_MAX_CHECKS 256

struct held {
	struct hmap ids; /* stack id -> struct held_entry */
	struct held_entry **wait; /* the entries whose copy waits */
	size_t waiting, cap_wait, waiting_bytes;
	struct held_check *checks[HELD_MAX_CHECKS];
	size_t nr_checks;
	struct held_stats st;
};

struct held *held__new(void)
{
	return calloc(1, sizeof(struct held));
}

void held__free(struct held *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->ids.cap; i++) {
		struct held_entry *e = h->ids.slots[i].val;

		if (e) {
			free(e->rec);
			free(e->frames);
			free(e);
		}
	}
	hmap__clear(&h->ids);
	free(h->wait);
	for (size_t i = 0; i < h->nr_checks; i++)
		free(h->checks[i]);
	free(h);
}

static void stop_waiting(struct held *h, struct held_entry *e)
{
	if (!e->rec)
		return;
	/* the last waiting entry takes its place */
	h->wait[e->wait_idx] = h->wait[--h->waiting];
	h->wait[e->wait_idx]->wait_idx = e->wait_idx;
	h->waiting_bytes -= e->rec_size;
	free(e->rec);
	e->rec = NULL;
}

static void give_up(struct held *h, struct held_entry *e)
{
	stop_waiting(h, e);
	h->st.unwalked++;
}

int held__add(struct held *h, const void *data, size_t size)
{
	const struct wprof_held *rec = data;
	struct held_entry *e;
	void *old;

	if (size < sizeof(*rec))
		return -EINVAL;
	e = hmap__get(&h->ids, rec->stack_id, 0);
	if (e)
		return 0; /* named already, as frame pointers only (and counted then) */
	e = calloc(1, sizeof(*e));
	if (!e || h->ids.nr >= HELD_MAX_ENTRIES ||
	    h->waiting_bytes + sizeof(*rec) > HELD_MAX_BYTES ||
	    array_reserve((void **)&h->wait, &h->cap_wait, h->waiting, sizeof(*h->wait), 64) ||
	    !(e->rec = malloc(sizeof(*rec))) ||
	    hmap__put(&h->ids, rec->stack_id, 0, e, &old)) {
		if (e)
			free(e->rec);
		free(e);
		h->st.dropped++; /* unwalked: counted when its stack is named */
		return 0;
	}
	memcpy(e->rec, rec, sizeof(*rec));
	e->rec_size = sizeof(*rec);
	e->arrived_ns = now_ns();
	e->wait_idx = h->waiting;
	h->wait[h->waiting++] = e;
	h->waiting_bytes += e->rec_size;
	return 0;
}

/* A walk of a copy: where it is, as in bpf/unwind.bpf.h's struct walk_state. */
struct walk {
	const struct wprof_held *rec;
	const struct wprof_proc_maps *pm;
	const struct wprof_unwind_row *rows;
	__u32 nr_rows;
	struct wprof_stack *out;
	__u64 pc, sp, fp;
	bool fp_ok, exact_pc;
	__u32 cut;
	int last_map; /* index of the last frame's mapping, or -1 */
};

/* Whether the copy has [addr, addr + 8): its pages were read. */
static bool in_copy(const struct wprof_held *r, __u64 addr)
{
	__u64 off = addr - r->base;

	if (addr < r->base || off > sizeof(r->data) - 8)
		return false;
	return (r->pages >> (off / WPROF_HELD_PAGE) & 1) &&
	       (r->pages >> ((off + 7) / WPROF_HELD_PAGE) & 1);
}

/* A word of the copy; false (and the cut) when it does not have it. */
static bool read_word(struct walk *w, __u64 addr, __u64 *val)
{
	const struct wprof_held *r = w->rec;

	if (!in_copy(r, addr)) {
		/* past what was copied, or where the kernel could not read either */
		w->cut = addr >= r->base && addr - r->base > sizeof(r->data) - 8 ?
				 WPROF_CUT_COPY : WPROF_CUT_READ;
		return false;
	}
	memcpy(val, r->data + (addr - r->base), sizeof(*val));
	return true;
}

static int find_map(const struct wprof_proc_maps *pm, __u64 pc)
{
	__u32 lo = 0, hi = pm->nr < WPROF_MAX_EXEC_MAPS ? pm->nr : WPROF_MAX_EXEC_MAPS;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (pm->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < pm->maps[lo - 1].end ? (int)lo - 1 : -1;
}

static const struct wprof_unwind_row *row_at(const struct walk *w, __u32 idx)
{
	return idx < w->nr_rows ? &w->rows[idx] : NULL;
}

static bool rows_current(const struct walk *w, const struct wprof_exec_map *m)
{
	const struct wprof_unwind_row *hdr = m->page_first ? row_at(w, m->page_first - 1) : NULL;

	return hdr && hdr->kind == WPROF_ROW_HEADER && hdr->pc == m->tag;
}

static __u32 page_entry(const struct walk *w, __u32 idx)
{
	const struct wprof_unwind_row *e = row_at(w, idx);

	return e ? e->pc : WPROF_NO_ROW;
}

/* The row in force at table address @rel of @m, or NULL (as find_row() in BPF). */
static const struct wprof_unwind_row *find_row(const struct walk *w,
					       const struct wprof_exec_map *m, __u32 rel)
{
	__u32 page = rel >> WPROF_PAGE_SHIFT, lo, hi, a, b;

	if (page >= m->page_nr)
		page = m->page_nr - 1;
	lo = page_entry(w, m->page_first + page);
	hi = page + 1 < m->page_nr ? page_entry(w, m->page_first + page + 1) :
				     m->row_first + m->row_nr - 1;
	if (hi == WPROF_NO_ROW)
		return NULL;
	lo = lo == WPROF_NO_ROW ? m->row_first : lo;
	/* the last row at or before rel among [lo, hi] */
	for (b = hi + 1, a = lo; a < b;) {
		__u32 mid = a + (b - a) / 2;
		const struct wprof_unwind_row *r = row_at(w, mid);

		if (!r)
			return NULL;
		if (r->pc <= rel)
			a = mid + 1;
		else
			b = mid;
	}
	return a == lo ? NULL : row_at(w, a - 1);
}

static bool push(struct walk *w, __u64 pc)
{
	if (w->out->nr >= WPROF_MAX_STACK_DEPTH - 1) {
		w->cut = WPROF_CUT_DEPTH; /* the last slot is kept for the cut frame */
		return false;
	}
	w->out->ips[w->out->nr++] = pc;
	return true;
}

enum step { STEP_ON, STEP_END, STEP_STALE };

/* One caller, by the rules of unwind_step() in bpf/unwind.bpf.h. */
static enum step step(struct walk *w)
{
	__u64 look = w->exact_pc ? w->pc : w->pc - 1, cfa, ra = 0, saved;
	const struct wprof_unwind_row *row = NULL;
	const struct wprof_exec_map *m;
	bool by_fp = false, leaf_reg = false;
	int idx = w->last_map;
	__u32 kind;

	if (idx < 0 || look < w->pm->maps[idx].start || look >= w->pm->maps[idx].end)
		idx = find_map(w->pm, look);
	if (idx < 0) {
		/* not code: the last frame was no return address either */
		if (w->out->nr > 1)
			w->out->nr--;
		w->cut = WPROF_CUT_NO_CODE;
		return STEP_END;
	}
	w->last_map = idx;
	m = &w->pm->maps[idx];
	if (m->row_nr && m->page_nr && look >= m->base) {
		if (!rows_current(w, m))
			return STEP_STALE;
		row = find_row(w, m, (__u32)(look - m->base));
	}
	kind = row ? row->kind : WPROF_CFA_NONE;
	switch (kind) {
	case WPROF_CFA_ENTRY:
		if (w->fp_ok && !w->fp)
			return STEP_END; /* the outermost frame */
		/* fall through */
	case WPROF_CFA_NONE:
		if (!w->fp_ok || w->fp < w->sp || (w->fp & 7)) {
			w->cut = WPROF_CUT_NO_CODE;
			return STEP_END;
		}
		if (!read_word(w, w->fp, &saved) || !read_word(w, w->fp + 8, &ra))
			return STEP_END;
		cfa = w->fp + 16;
		w->fp = saved;
		by_fp = true;
		goto next;
	case WPROF_CFA_SP:
		cfa = w->sp + row->cfa_off;
		break;
	case WPROF_CFA_FP:
		if (!w->fp_ok) {
			w->cut = WPROF_CUT_BAD_RULE;
			return STEP_END;
		}
		cfa = w->fp + row->cfa_off;
		break;
	case WPROF_CFA_PLT:
		cfa = w->sp + 8 + ((look & 15) >= row->cfa_off ? 8 : 0);
		break;
	case WPROF_CFA_SIGNAL:
		if (!read_word(w, w->sp + WPROF_SIGCTX_IP, &w->pc) ||
		    !read_word(w, w->sp + WPROF_SIGCTX_FP, &w->fp) ||
		    !read_word(w, w->sp + WPROF_SIGCTX_SP, &w->sp))
			return STEP_END;
		w->fp_ok = true;
		w->exact_pc = true;
		return push(w, w->pc) ? STEP_ON : STEP_END;
	case WPROF_CFA_END:
		return STEP_END;
	case WPROF_CFA_SYSCALL:
	case WPROF_CFA_RA_RDI:
		/* the leaf frame only, with the task's registers as it entered the kernel */
		if (w->out->nr != 1 || !w->exact_pc) {
			w->cut = WPROF_CUT_BAD_RULE;
			return STEP_END;
		}
		cfa = w->sp + row->cfa_off;
		if (kind == WPROF_CFA_SYSCALL) {
			if (!w->rec->rax)
				return STEP_END; /* the child, whose first frame this is */
			break;
		}
		ra = w->rec->rdi;
		leaf_reg = true;
		goto next;
	default:
		w->cut = WPROF_CUT_BAD_RULE;
		return STEP_END;
	}
	if (!read_word(w, cfa - 8, &ra))
		return STEP_END;
	if (row->fp_off8 == WPROF_FP_LOST) {
		w->fp_ok = false;
	} else if (row->fp_off8) {
		if (!read_word(w, cfa + (__s64)row->fp_off8 * 8, &saved))
			return STEP_END;
		w->fp = saved;
		w->fp_ok = true;
	}
next:
	if (!ra) {
		/* a zeroed return address ends a chain: of frame pointers, with a zeroed fp */
		if (by_fp && w->fp)
			w->cut = WPROF_CUT_NO_CODE;
		return STEP_END;
	}
	if (cfa <= w->sp && !(leaf_reg && cfa == w->sp)) {
		w->cut = WPROF_CUT_LOOP;
		return STEP_END;
	}
	w->sp = cfa;
	w->pc = ra;
	w->exact_pc = false;
	return push(w, ra) ? STEP_ON : STEP_END;
}

int held__walk_one(const struct wprof_held *rec, const struct wprof_proc_maps *pm,
		   const struct wprof_unwind_row *rows, __u32 nr_rows, struct wprof_stack *out)
{
	struct walk w = {
		.rec = rec, .pm = pm, .rows = rows, .nr_rows = nr_rows, .out = out,
		.pc = rec->pc, .sp = rec->sp, .fp = rec->fp,
		.fp_ok = true, .exact_pc = true, .last_map = -1,
	};
	enum step s = STEP_ON;

	out->nr = 0;
	push(&w, rec->pc);
	for (int i = 0; i < WPROF_MAX_STACK_DEPTH && s == STEP_ON; i++)
		s = step(&w);
	if (s == STEP_STALE)
		return 1;
	if (w.cut && out->nr < WPROF_MAX_STACK_DEPTH)
		out->ips[out->nr++] = WPROF_FRAME_CUT | w.cut;
	return 0;
}

/*
 * Whether @pm were read in the program @rec was taken in (the same start of
 * the process and of its stack: the latter changes at an exec) with as much
 * code (mm->exec_vm): what the kernel's walk asks of maps, and the exec too
 * (the kernel's walk learns of it at once, user space from an event that
 * comes after copies taken since).
 */
static bool maps_match(const struct wprof_proc_maps *pm, const struct wprof_held *rec)
{
	return pm && pm->nr && pm->start_ticks == rec->start_ticks &&
	       pm->start_stack == rec->start_stack && pm->exec_vm == rec->exec_vm;
}

/* Walk @e's copy if its maps are there: true when done with it. */
static bool try_walk(struct held *h, struct held_entry *e, const struct unwtab *u)
{
	const struct wprof_held *rec = e->rec;
	const struct wprof_proc_maps *pm = unwtab__maps(u, rec->pid);
	const struct wprof_unwind_row *rows;
	struct wprof_stack st;
	__u32 nr_rows;
	size_t size;

	if (!maps_match(pm, rec))
		return false;
	rows = unwtab__rows(u, &nr_rows);
	if (!rows || held__walk_one(rec, pm, rows, nr_rows, &st))
		return false;
	size = offsetof(struct wprof_stack, ips) + st.nr * sizeof(st.ips[0]);
	e->frames = malloc(size);
	if (!e->frames)
		return false; /* tried again, or given up in time */
	memcpy(e->frames, &st, size);
	stop_waiting(h, e);
	if (st.nr && st.ips[st.nr - 1] >= WPROF_FRAME_CUT)
		h->st.cut[(st.ips[st.nr - 1] - WPROF_FRAME_CUT) % WPROF_CUT_CNT]++;
	else
		h->st.walked++;
	return true;
}

void held__add_check(struct held *h, const struct wprof_held *rec, const struct wprof_stack *kst)
{
	struct held_check *c;

	if (h->nr_checks == HELD_MAX_CHECKS || !(c = malloc(sizeof(*c))))
		return; /* a self-test: what it cannot keep, it does not compare */
	c->rec = *rec;
	c->kst = *kst;
	h->checks[h->nr_checks++] = c;
}

/* How many Python words (WPROF_FRAME_PY...) a user stack begins with. */
static __u32 py_words(const struct wprof_stack *st)
{
	__u32 n = 0;

	while (n < st->nr && WPROF_IS_PY_WORD(st->ips[n]))
		n++;
	return n;
}

/*
 * Walk the checks' copies whose maps are still the walk's, and compare:
 * the same frames, unless the copy ran out (the kernel reads on).
 */
static void run_checks(struct held *h, const struct unwtab *u)
{
	__u32 nr_rows;
	const struct wprof_unwind_row *rows = unwtab__rows(u, &nr_rows);

	for (size_t i = 0; i < h->nr_checks; i++) {
		struct held_check *c = h->checks[i];
		const struct wprof_proc_maps *pm = unwtab__maps(u, c->rec.pid);
		struct wprof_stack st;

		/* the kernel's Python frames (not in the copy) are not compared */
		__u32 py = py_words(&c->kst);

		c->kst.nr -= py;
		memmove(c->kst.ips, &c->kst.ips[py], c->kst.nr * sizeof(c->kst.ips[0]));
		if (rows && maps_match(pm, &c->rec) &&
		    !held__walk_one(&c->rec, pm, rows, nr_rows, &st) &&
		    !(st.nr && st.ips[st.nr - 1] == (WPROF_FRAME_CUT | WPROF_CUT_COPY))) {
			h->st.checked++;
			if (st.nr != c->kst.nr ||
			    memcmp(st.ips, c->kst.ips, st.nr * sizeof(st.ips[0])))
				h->st.check_differed++;
		}
		free(c);
	}
	h->nr_checks = 0;
}

void held__walk(struct held *h, const struct unwtab *u, __u32 pid, __u64 now, bool final)
{
	if (u && h->nr_checks)
		run_checks(h, u);
	/* backwards: an entry that stops waiting takes the last one's place */
	for (size_t i = h->waiting; i-- > 0;) {
		struct held_entry *e = h->wait[i];

		if (pid && e->rec->pid != pid)
			continue;
		if (u && try_walk(h, e, u))
			continue;
		if (final || now - e->arrived_ns > HELD_WAIT_NS)
			give_up(h, e);
	}
}

static void native_frames(struct held *h, __u64 id, struct wprof_stack *in);

/*
 * A held stack's Python words come first (include/wprof.h): they stay in
 * front of the native frames that replace the held ones (as many of those
 * as fit after them).
 */
void held__frames(struct held *h, __u64 id, struct wprof_stack *in)
{
	__u64 py[WPROF_MAX_STACK_DEPTH];
	__u32 n = py_words(in);

	if (!n) {
		native_frames(h, id, in);
		return;
	}
	memcpy(py, in->ips, n * sizeof(py[0]));
	in->nr -= n;
	memmove(in->ips, &in->ips[n], in->nr * sizeof(in->ips[0]));
	native_frames(h, id, in);
	if (in->nr > WPROF_MAX_STACK_DEPTH - n)
		in->nr = WPROF_MAX_STACK_DEPTH - n;
	memmove(&in->ips[n], in->ips, in->nr * sizeof(in->ips[0]));
	memcpy(in->ips, py, n * sizeof(py[0]));
	in->nr += n;
}

static void native_frames(struct held *h, __u64 id, struct wprof_stack *in)
{
	struct held_entry *e;
	void *old;

	if (!in->nr || !WPROF_IS_HELD(in->ips[in->nr - 1]))
		return;
	in->nr--; /* the held frame, whatever comes of it */
	e = h ? hmap__get(&h->ids, id, 0) : NULL;
	if (e && e->frames) {
		memcpy(in->ips, e->frames->ips, e->frames->nr * sizeof(in->ips[0]));
		in->nr = e->frames->nr;
		return;
	}
	if (e) {
		if (e->rec)
			give_up(h, e);
		return;
	}
	/* its copy has not come yet (or never will): this one is named as it is */
	if (!h)
		return;
	h->st.unwalked++;
	e = calloc(1, sizeof(*e));
	if (e && hmap__put(&h->ids, id, 0, e, &old))
		free(e);
}

void held__sweep(struct held *h, const struct hmap *used)
{
	__u64 *gone = malloc((h->ids.nr + 1) * sizeof(*gone));
	size_t n = 0;

	if (!gone)
		return; /* freed at a later sweep */
	for (size_t i = 0; i < h->ids.cap; i++) {
		struct hmap_slot *slot = &h->ids.slots[i];
		struct held_entry *e = slot->val;

		if (!e || e->rec)
			continue; /* empty, or still waiting */
		if (hmap__get(used, slot->k1, 0))
			e->unused = 0;
		else if (++e->unused >= 2)
			gone[n++] = slot->k1;
	}
	/* taken out after the pass: a removal moves other entries in the table */
	for (size_t i = 0; i < n; i++) {
		struct held_entry *e = hmap__del(&h->ids, gone[i], 0);

		free(e->frames);
		free(e);
	}
	free(gone);
}

void held__stats(const struct held *h, struct held_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (h)
		*out = h->st;
}
