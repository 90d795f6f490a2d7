/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython frames after a walked user stack (include/wprof.h: WPROF_FRAME_PY).
 *
 * A thread's Python frames are read at the event that walks its native stack,
 * from its own memory: from its PyThreadState (found in the interpreter's
 * list of them by its native thread id, then kept by tid and checked again at
 * every use) to its current _PyInterpreterFrame, and from frame to frame by
 * `previous`. Each frame gives its code object's address and the instruction
 * it is at; user space names the code objects (src/pyproc.c). Every read is
 * bounded: PY_MAX_THREADS thread states, as many frames as the stack has
 * room for. A frame that cannot be read ends them with a cut word, counted.
 */
#ifndef WPROF_PYTHON_BPF_H
#define WPROF_PYTHON_BPF_H

#include "common.bpf.h"

#define PY_MAX_THREADS 512
/* two words each: a quarter of a stack's room at most, the rest for the native frames */
#define PY_MAX_FRAMES (WPROF_MAX_STACK_DEPTH / 4)
/* _PyInterpreterFrame.owner of the frame _PyEval_EvalFrameDefault puts below its first (3.12 on) */
#define PY_OWNED_BY_CSTACK 3

/* Set by user space where a process runs a CPython it knows. */
const volatile bool python_frames __weak = false;

/* By tgid: how to read its frames (user space writes them as it finds them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wprof_py_proc);
} py_procs SEC(".maps") __weak;

/*
 * By tid: the address of its PyThreadState as last found, and the thread's
 * start (a later thread of the tid, whose state may sit at a freed one's
 * address with the id it had, looks again). Checked at each use.
 */
struct py_tstate {
	__u64 addr;
	__u64 start;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct py_tstate);
} py_tstates SEC(".maps") __weak;

/*
 * The code objects seen, by what tells one from a later one at the same
 * address: its id and names (user space takes and deletes them at drains).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct wprof_py_code_key);
	__type(value, struct wprof_py_code);
} py_codes SEC(".maps") __weak;

/*
 * A code object's id: a hash of its key, the same at every sight (a drain
 * frees the entry, the next sight makes it anew: a stack walked before and
 * after has the same words). 47 bits (include/wprof.h); two keys of one id
 * are told apart by user space, and counted.
 */
static __always_inline __u64 py_code_hash(const struct wprof_py_code_key *k)
{
	__u64 h = 0xcbf29ce484222325ULL;

	h = (h ^ k->pid) * 0x100000001b3ULL;
	h = (h ^ k->code) * 0x100000001b3ULL;
	h = (h ^ k->qualname) * 0x100000001b3ULL;
	h = (h ^ k->filename) * 0x100000001b3ULL;
	h = (h ^ k->linetable) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h &= WPROF_PY_ENTRY - 1;
	return h ? h : 1;
}

/* A walk's numbers, by scratch slot: off the BPF stack, which the CFI walk nearly fills */
struct py_state {
	__u64 at;  /* the thread state, or frame, to read next */
	__u32 pid;
	__u32 tid;
	__u32 nr;  /* the stack's words so far */
	__u64 want; /* the thread's id as its thread state has it */
	__u32 cut; /* enum wprof_py_cut, or 0 */
	bool found;
	__u8 entry;
	struct py_tstate ts; /* the thread's, as the cache keeps it */
	struct wprof_py_code newcode; /* a new code entry is put together here */
	/* what the steps read (a read's destination off the stack too) */
	__u64 code, prev, instr, word;
	struct wprof_py_code_key key; /* py_code_id()'s */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_CNT);
	__type(key, __u32);
	__type(value, struct py_state);
} py_states SEC(".maps") __weak;

/* A walk: its pointers on the stack (bpf_loop() hands the steps a stack pointer; a map keeps no pointer) */
struct py_walk {
	struct py_state *s;
	struct wprof_stack *st;
	const struct wprof_py_proc *pp;
	struct task_struct *task; /* read with bpf_copy_from_user_task() when `other` */
};

/*
 * Reads of the walked task's memory. @other is a constant at every call: a
 * program that must not sleep never has bpf_copy_from_user_task() in it.
 */
static __always_inline long py_word_(struct py_walk *w, __u64 addr, __u64 *val, bool other)
{
	*val = 0;
	if (other)
		return bpf_copy_from_user_task(val, sizeof(*val), (void *)addr, w->task, 0);
	return bpf_probe_read_user(val, sizeof(*val), (void *)addr);
}

static __always_inline long py_byte_(struct py_walk *w, __u64 addr, __u8 *val, bool other)
{
	*val = 0;
	if (other)
		return bpf_copy_from_user_task(val, sizeof(*val), (void *)addr, w->task, 0);
	return bpf_probe_read_user(val, sizeof(*val), (void *)addr);
}

#define py_word(w, addr, val) py_word_(w, addr, val, other)
#define py_byte(w, addr, val) py_byte_(w, addr, val, other)

/* One thread state of the list: stops at the walking thread's (w->s->found, w->s->at). */
static __always_inline long py_ts_step(struct py_walk *w, bool other)
{
	struct py_state *s = w->s;

	if (!s->at || py_word(w, s->at + w->pp->ts_native_tid, &s->word))
		return 1;
	if (s->word == s->want) {
		s->found = true;
		return 1;
	}
	if (py_word(w, s->at + w->pp->ts_next, &s->word))
		return 1;
	s->at = s->word;
	return 0;
}

/* PyASCIIObject's length and state bits, the same from 3.11 to 3.13 */
#define PY_STR_LENGTH 16
#define PY_STR_STATE 32
#define PY_STR_COMPACT 0x20
#define PY_STR_ASCII 0x40
/* PyBytesObject's ob_size and ob_sval, the same too */
#define PY_BYTES_SIZE 16
#define PY_BYTES_DATA 32

/*
 * The text of str object @obj into @dst (@room bytes, a power of 2): its
 * bytes as stored, @kind bytes a character. Only compact strings (all a
 * code object's names are): else kind 0.
 */
static __always_inline void py_str(struct py_walk *w, __u64 obj, char *dst, __u32 room,
				   __u16 *len, __u8 *kind, __u8 *cut, bool other)
{
	__u64 n, data, bytes;
	__u8 state, k;

	*kind = 0;
	if (!obj || py_word(w, obj + PY_STR_LENGTH, &n) || py_byte(w, obj + PY_STR_STATE, &state) ||
	    !(state & PY_STR_COMPACT))
		return;
	k = (state >> 2) & 7;
	if (k != 1 && k != 2 && k != 4)
		return;
	data = obj + (state & PY_STR_ASCII ? w->pp->str_ascii : w->pp->str_compact);
	bytes = n * k;
	*cut = bytes > room;
	if (bytes > room)
		bytes = room;
	barrier_var(bytes);
	if (bytes > room)
		return;
	if (bytes && (other ? bpf_copy_from_user_task(dst, bytes, (void *)data, w->task, 0) :
			      bpf_probe_read_user(dst, bytes, (void *)data)))
		return;
	*len = bytes;
	*kind = k;
}

/*
 * The id of code object @code of the walked process, named as it is now if
 * it is new; 0 if it could not be read or kept (counted).
 */
static __always_inline __u64 py_code_id(struct py_walk *w, __u64 code, bool other)
{
	struct wprof_py_code_key *key = &w->s->key;
	struct wprof_py_code *v;

	key->pid = w->s->pid;
	key->pad = 0;
	key->code = code;
	if (py_word(w, code + w->pp->co_qualname, &key->qualname) ||
	    py_word(w, code + w->pp->co_filename, &key->filename) ||
	    py_word(w, code + w->pp->co_linetable, &key->linetable))
		return 0;
	v = bpf_map_lookup_elem(&py_codes, key);
	if (v)
		return v->id;
	/* the walk's own (per slot: a sample may come in the middle of another walk) */
	v = &w->s->newcode;
	v->code_units = w->pp->code_units;
	v->line_kind = w->pp->line_kind;
	v->name_len = v->file_len = 0;
	v->name_cut = v->file_cut = 0;
	py_str(w, key->qualname, v->name, WPROF_PY_NAME_LEN, &v->name_len, &v->name_kind,
	       &v->name_cut, other);
	py_str(w, key->filename, v->file, WPROF_PY_FILE_LEN, &v->file_len, &v->file_kind,
	       &v->file_cut, other);
	v->firstlineno = py_word(w, code + w->pp->co_firstlineno, &w->s->word) ? 0 : (__u32)w->s->word;
	v->lines_len = 0;
	if (key->linetable) {
		/* a bytes object: its size, then its bytes after the header */
		__u64 obj = key->linetable, n;

		if (!py_word(w, obj + PY_BYTES_SIZE, &n)) {
			if (n > WPROF_PY_LINES_LEN)
				n = WPROF_PY_LINES_LEN;
			barrier_var(n);
			if (n && n <= WPROF_PY_LINES_LEN &&
			    !(other ? bpf_copy_from_user_task(v->lines, n, (void *)(obj + PY_BYTES_DATA),
							      w->task, 0) :
				      bpf_probe_read_user(v->lines, n, (void *)(obj + PY_BYTES_DATA))))
				v->lines_len = n;
		}
	}
	v->id = py_code_hash(key);
	if (bpf_map_update_elem(&py_codes, key, v, BPF_NOEXIST)) {
		struct wprof_py_code *again = bpf_map_lookup_elem(&py_codes, key);

		if (again) /* another CPU's walk added it meanwhile */
			return again->id;
		stat_add(WPROF_STAT_PY_CODES_FULL, 1);
		return 0;
	}
	return v->id;
}

/* One frame, leaf first: two words into the stack, then on to `previous`. */
static __always_inline long py_frame_step(struct py_walk *w, bool other)
{
	const struct wprof_py_proc *pp = w->pp;
	struct wprof_stack *st = w->st;
	struct py_state *s = w->s;
	__u64 frame = s->at;
	__u32 nr = s->nr;
	__u64 id;
	bool entry;

	if (!frame)
		return 1;
	if (py_word(w, frame + pp->fr_code, &s->code) ||
	    py_word(w, frame + pp->fr_previous, &s->prev) ||
	    py_word(w, frame + pp->fr_instr, &s->instr) ||
	    py_byte(w, frame + pp->fr_entry, &s->entry)) {
		s->cut = WPROF_PY_CUT_READ;
		return 1;
	}
	s->at = s->prev;
	entry = s->entry;
	if (pp->entry_kind == WPROF_PY_ENTRY_EVERY) {
		entry = true;
	} else if (pp->entry_kind == WPROF_PY_ENTRY_OWNER) {
		if (s->entry == PY_OWNED_BY_CSTACK) {
			/* below an activation's first frame: the one pushed last */
			if (nr >= 2 && nr - 2 < WPROF_MAX_STACK_DEPTH)
				st->ips[nr - 2] |= WPROF_PY_ENTRY;
			return 0;
		}
		entry = false;
	}
	if (nr > WPROF_MAX_STACK_DEPTH - 2) {
		w->s->cut = WPROF_PY_CUT_DEPTH;
		return 1;
	}
	id = py_code_id(w, s->code, other);
	if (!id) {
		w->s->cut = WPROF_PY_CUT_READ;
		return 1;
	}
	barrier_var(nr);
	if (nr > WPROF_MAX_STACK_DEPTH - 2)
		return 1;
	st->ips[nr] = WPROF_FRAME_PY | id | (entry ? WPROF_PY_ENTRY : 0);
	st->ips[nr + 1] = WPROF_FRAME_PY_AT |
			  ((pp->instr_is_index ? s->instr : s->instr - s->code) & 0xffffffffULL);
	w->s->nr = nr + 2;
	return 0;
}

static long py_ts_step_cur(__u64 i, struct py_walk *w)
{
	return py_ts_step(w, false);
}

static long py_ts_step_other(__u64 i, struct py_walk *w)
{
	return py_ts_step(w, true);
}

static long py_frame_step_cur(__u64 i, struct py_walk *w)
{
	return py_frame_step(w, false);
}

static long py_frame_step_other(__u64 i, struct py_walk *w)
{
	return py_frame_step(w, true);
}

/*
 * The Python frames of `task` (the current task unless `other`) into `st`
 * (from its start), where its process runs a CPython user space knows;
 * none for a thread that has no Python thread state.
 */
static __always_inline void py_read(struct wprof_stack *st, struct task_struct *task, bool other,
				    __u32 slot)
{
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct py_walk walk, *w = &walk;
	struct py_state *s;
	struct py_tstate *cached;

	st->nr = 0;
	if (!python_frames)
		return;
	w->pp = bpf_map_lookup_elem(&py_procs, &pid);
	if (!w->pp || w->pp->start_ticks != start_ticks(BPF_CORE_READ(task, group_leader)) ||
	    w->pp->start_stack != BPF_CORE_READ(task, mm, start_stack))
		return;
	s = w->s = bpf_map_lookup_elem(&py_states, &slot);
	if (!s)
		return;
	w->st = st;
	w->task = task;
	s->at = 0;
	s->pid = pid;
	s->tid = BPF_CORE_READ(task, pid);
	s->nr = 0;
	s->cut = 0;
	s->found = false;
	s->want = w->pp->tid_is_fsbase ? BPF_CORE_READ(task, thread.fsbase) : s->tid;
	/* the thread state: as found before, if it is still the thread's */
	s->ts.start = BPF_CORE_READ(task, start_time);
	cached = bpf_map_lookup_elem(&py_tstates, &s->tid);
	if (cached && cached->start == s->ts.start) {
		s->prev = cached->addr;
		if (!py_word(w, s->prev + w->pp->ts_native_tid, &s->word) && s->word == s->want)
			s->found = true;
	}
	if (!s->found) {
		if (py_word(w, w->pp->runtime + w->pp->interp_head, &s->word) ||
		    py_word(w, s->word + w->pp->threads_head, &s->at)) {
			s->cut = WPROF_PY_CUT_THREAD;
			goto out;
		}
		bpf_loop(PY_MAX_THREADS, other ? (void *)py_ts_step_other : (void *)py_ts_step_cur,
			 w, 0);
		if (!s->found) {
			/* a thread Python does not know (one C code made), or past the bound */
			if (s->at)
				s->cut = WPROF_PY_CUT_THREAD;
			goto out;
		}
		s->prev = s->ts.addr = s->at;
		bpf_map_update_elem(&py_tstates, &s->tid, &s->ts, BPF_ANY);
	}
	/* its current frame */
	if (py_word(w, s->prev + w->pp->ts_frame, &s->at) ||
	    (w->pp->cframe_frame != WPROF_PY_NONE && s->at &&
	     py_word(w, s->at + w->pp->cframe_frame, &s->at))) {
		s->cut = WPROF_PY_CUT_READ;
		goto out;
	}
	bpf_loop(PY_MAX_FRAMES, other ? (void *)py_frame_step_other : (void *)py_frame_step_cur,
		 w, 0);
	if (s->at && !s->cut)
		s->cut = WPROF_PY_CUT_DEPTH;
out:
	if (s->nr)
		stat_add(WPROF_STAT_PY_STACKS, 1);
	if (s->cut) {
		__u32 nr = s->nr;

		stat_add(WPROF_STAT_PY_CUT, 1);
		barrier_var(nr);
		if (nr < WPROF_MAX_STACK_DEPTH) {
			st->ips[nr] = WPROF_FRAME_PY_CUT | s->cut;
			s->nr = nr + 1;
		}
	}
	st->nr = s->nr;
}

/*
 * py_read() of the current task into scratch stack `slot`, before its native
 * walk (which goes on after them). A global function: its frame is not on
 * top of the CFI walk's.
 */
__weak __noinline int py_read_current(__u32 slot)
{
	struct wprof_stack *st = scratch_stack(slot);

	if (st)
		py_read(st, bpf_get_current_task_btf(), false, slot);
	return 0;
}

#undef py_word
#undef py_byte

#endif /* WPROF_PYTHON_BPF_H */
