/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The user stack walk: every caller recovered from the code's own CFI, at
 * every event, from the thread's own registers and stack.
 *
 * A frame-pointer walk (bpf_get_stack()) skips callers in code built without
 * frame pointers -- Debian's libc, and most distribution binaries -- or reads
 * random words once such code has used the frame pointer as a register. So
 * user space turns each executable file's .eh_frame into rows (struct
 * wprof_unwind_row: from this address on, the CFA is this register plus
 * that offset, the caller's frame pointer is saved there) and tells, per
 * process, which file is mapped where (struct wprof_proc_maps). The walk:
 * find the mapping of pc, the row of pc, compute the CFA, read the return
 * address below it and the saved frame pointer, repeat. Code without CFI
 * (JIT code, Go) takes a frame-pointer step. A walk that cannot reach the
 * thread's outermost frame (whose return address the CFI marks undefined)
 * says why in a last frame, WPROF_FRAME_CUT | reason, and is counted.
 *
 * The maps of a process are trusted only while they are provably the ones
 * read: the same process (leader start time) and the same amount of
 * executable memory (mm->exec_vm); exec invalidates them at once. Otherwise
 * user space is asked to read them again, and the walk meanwhile falls back
 * to frame pointers; a walk of the current task then also holds a copy of
 * its stack for user space to walk once the maps are read (struct
 * wprof_held), and what cannot be so walked is cut and counted.
 */
#ifndef WPROF_UNWIND_BPF_H
#define WPROF_UNWIND_BPF_H

#include "common.bpf.h"
#include "python.bpf.h"

/* x86-64 only: elsewhere bpf_get_stack()'s frame-pointer walk stands alone. */
#if defined(__TARGET_ARCH_x86)
#define WPROF_CFI_UNWIND 1
#else
#define WPROF_CFI_UNWIND 0
#endif

/* log2 of the most maps and rows a binary search must cover, rounded up */
#define MAP_SEARCH_STEPS 8
#define ROW_SEARCH_STEPS 26

/*
 * A piece of the walked stack, read at once: on this VM a read of user memory
 * costs about as much for 1 KiB as for 8 bytes (the call, not the copy, is
 * the cost), and a walk reads two words per frame, most of them a few
 * hundred bytes apart. Aligned to its size, a chunk never spans two pages:
 * it can be read whole exactly when its words can be read one by one.
 */
#define CHUNK_SIZE 512
#define CHUNK_WORDS (CHUNK_SIZE / 8)

/*
 * Where a walk is: its registers and counts. In the slot's chunk, not on the
 * BPF stack: the verifier tracks what a program keeps on its stack, and a walk
 * whose values it could tell apart at every step (frame counts, flags) had it
 * check the step again for each of them, up to the deepest stack; in map
 * memory they are unknown to it, and it checks a step once or twice.
 */
struct walk_state {
	__u64 pc, sp, fp;
	__u64 cfi_frames, fp_frames;
	__u32 nr;
	__u32 cut;      /* enum wprof_cut, 0 while going or when complete */
	__u32 pid;      /* tgid of the walked task */
	__u32 last_map; /* index of the mapping of the last frame + 1; 0: none */
	__u32 fp_ok;    /* fp holds the frame pointer's true value */
	__u32 exact_pc; /* pc is not a return address (frame 0, after a signal frame) */
	__u32 stale;    /* the maps named rows given to other code since: not used */
	__u32 pad;
};

struct stack_chunk {
	struct walk_state s;
	__u64 base; /* user address of w[0]; 0: nothing read */
	__u64 w[CHUNK_WORDS];
};

/*
 * Held stacks (struct wprof_held), to user space; hold_stacks: walks without
 * a table send them (not with --check-deferred, which compares stack ids of
 * two walks, nor WPROF_HELD=off); check_held (WPROF_HELD=check, a self-test):
 * walks with the tables send a copy too, for user space to compare its walk
 * of the copy with theirs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} held_stacks SEC(".maps") __weak;

const volatile bool hold_stacks __weak = false;
const volatile bool check_held __weak = false;

/* numbers the held walks' last frames: a stack id for each */
__u32 held_seq __weak;

/* One per scratch slot (see `scratch`): walks in different contexts can nest. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_CNT);
	__type(key, __u32);
	__type(value, struct stack_chunk);
} stack_chunks SEC(".maps") __weak;

struct unwind_ctx {
	struct wprof_stack *st;
	struct wprof_proc_maps *pm;
	struct stack_chunk *chunk; /* its words unused for another task's stack */
	struct walk_state *s;    /* &chunk->s */
	struct task_struct *task;  /* the walked task, when it is not the current one */
};

/*
 * A word of the walked task's memory. The current task's stack words come
 * from its chunk, read again when the word is outside it; a word that is not
 * 8-byte aligned is read alone. The chunk is read during this walk only
 * (cfi_unwind() empties it first): it shows the memory as the walk found it.
 */
static __always_inline long read_word(struct unwind_ctx *c, __u64 addr, __u64 *val, bool other)
{
	struct stack_chunk *ch = c->chunk;
	__u64 base = addr & ~(__u64)(CHUNK_SIZE - 1);

	if (other)
		return bpf_copy_from_user_task(val, sizeof(*val), (void *)addr, c->task, 0);
	if (addr & 7)
		return bpf_probe_read_user(val, sizeof(*val), (void *)addr);
	if (ch->base != base) {
		ch->base = 0;
		if (bpf_probe_read_user(ch->w, sizeof(ch->w), (void *)base))
			return bpf_probe_read_user(val, sizeof(*val), (void *)addr);
		ch->base = base;
	}
	*val = ch->w[((addr - base) / 8) & (CHUNK_WORDS - 1)];
	return 0;
}

/*
 * Binary searches, one bpf_loop() step each: the verifier checks a callback
 * body once (until its states converge), where a plain loop of branches
 * would be followed down every path.
 */
struct search_ctx {
	struct wprof_proc_maps *pm;
	__u64 key;
	__u32 lo, hi; /* the answer is the last entry before lo */
};

static long map_search_step(__u64 i, struct search_ctx *s)
{
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = (s->lo + s->hi) / 2;
	if (s->pm->maps[mid & (WPROF_MAX_EXEC_MAPS - 1)].start <= s->key)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

static long row_search_step(__u64 i, struct search_ctx *s)
{
	struct wprof_unwind_row *row;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	row = bpf_map_lookup_elem(&unwind_rows, &mid);
	if (!row)
		return 1;
	if (row->pc <= s->key)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* The index of the mapping of pc, or -1. */
static __always_inline int find_map(struct wprof_proc_maps *pm, __u64 pc)
{
	struct search_ctx s = { .pm = pm, .key = pc, .hi = pm->nr };
	__u32 idx;

	if (s.hi > WPROF_MAX_EXEC_MAPS)
		s.hi = WPROF_MAX_EXEC_MAPS;
	bpf_loop(MAP_SEARCH_STEPS, map_search_step, &s, 0);
	if (!s.lo)
		return -1;
	idx = (s.lo - 1) & (WPROF_MAX_EXEC_MAPS - 1);
	return pc < pm->maps[idx].end ? (int)idx : -1;
}

/*
 * Whether the rows mapping `m` names are still its code's: user space gives
 * the room of code no live process maps to other code, and maps the BPF
 * side copied at a fork may outlive them (see struct wprof_exec_map). A walk
 * that finds them so reads nothing more of them: user space holds the room
 * given back long enough for walks that read the header before to end.
 */
static __always_inline bool rows_current(struct wprof_exec_map *m)
{
	__u32 idx = m->page_first - 1;
	struct wprof_unwind_row *h = bpf_map_lookup_elem(&unwind_rows, &idx);

	return h && h->kind == WPROF_ROW_HEADER && h->pc == m->tag;
}

/* Entry `idx` of a page index: a row index, or WPROF_NO_ROW. */
static __always_inline __u32 page_entry(__u32 idx)
{
	struct wprof_unwind_row *e = bpf_map_lookup_elem(&unwind_rows, &idx);

	return e ? e->pc : WPROF_NO_ROW;
}

/* The row in force at table address `rel` of mapping `m`, or NULL. */
static __always_inline struct wprof_unwind_row *find_row(struct wprof_exec_map *m, __u32 rel)
{
	__u32 page = rel >> WPROF_PAGE_SHIFT, first = m->row_first, lo, hi, idx;
	struct search_ctx s = { .key = rel };

	if (page >= m->page_nr)
		page = m->page_nr - 1; /* past the last row: that row's rule */
	/* the answer lies between the rows in force at this page's start and the next's */
	lo = page_entry(m->page_first + page);
	hi = page + 1 < m->page_nr ? page_entry(m->page_first + page + 1) :
				     first + m->row_nr - 1;
	if (hi == WPROF_NO_ROW)
		return NULL; /* no row starts before the next page: none before rel */
	lo = lo == WPROF_NO_ROW ? first : lo;
	s.lo = lo;
	s.hi = hi + 1;
	bpf_loop(ROW_SEARCH_STEPS, row_search_step, &s, 0);
	if (s.lo == lo)
		return NULL; /* every row here starts after rel */
	idx = s.lo - 1;
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

static __always_inline bool push_frame(struct unwind_ctx *c, __u64 pc)
{
	struct wprof_stack *st = c->st;
	__u32 nr = c->s->nr;

	if (nr >= WPROF_MAX_STACK_DEPTH - 1) {
		c->s->cut = WPROF_CUT_DEPTH; /* the last slot is kept for the cut frame */
		return false;
	}
	barrier_var(nr);
	if (nr >= WPROF_MAX_STACK_DEPTH)
		return false;
	st->ips[nr] = pc;
	c->s->nr = nr + 1;
	return true;
}

/* The walk's last frame says why it stopped early. */
static __always_inline void put_cut(struct wprof_stack *st, __u32 nr, __u32 cut)
{
	if (nr >= WPROF_MAX_STACK_DEPTH)
		nr = WPROF_MAX_STACK_DEPTH - 1;
	barrier_var(nr); /* so that the compiler indexes with the clamped value */
	if (nr >= WPROF_MAX_STACK_DEPTH)
		return;
	st->ips[nr] = WPROF_FRAME_CUT | cut;
	st->nr = nr + 1;
	stat_add(WPROF_STAT_USTACK_CUT, 1);
	stat_add(WPROF_STAT_CUT_BASE + (cut < WPROF_CUT_CNT ? cut : 0), 1);
}

/* The stack copied from this far below sp (see struct wprof_held). */
#define HELD_BELOW 1024

/*
 * A held record of the current task's stack, copied page by page, and its
 * registers; NULL when the ring buffer has no room. The caller submits it
 * once the walk's stack has its id, or discards it.
 */
static __always_inline struct wprof_held *held_copy(struct task_struct *task, __u64 pc,
						     __u64 sp, __u64 fp, __u32 pid)
{
	struct wprof_held *h = bpf_ringbuf_reserve(&held_stacks, sizeof(*h), 0);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 base = (sp - HELD_BELOW) & ~(__u64)(WPROF_HELD_PAGE - 1);
	__u32 pages = 0;

	if (!h)
		return NULL;
	/* page by page: one that is not there (untouched, past the stack's top) is left out */
#pragma unroll
	for (int i = 0; i < WPROF_HELD_PAGES; i++)
		if (!bpf_probe_read_user(&h->data[i * WPROF_HELD_PAGE], WPROF_HELD_PAGE,
					 (void *)(base + i * WPROF_HELD_PAGE)))
			pages |= 1U << i;
	h->stack_id = 0;
	h->start_ticks = start_ticks(BPF_CORE_READ(task, group_leader));
	h->exec_vm = BPF_CORE_READ(task, mm, exec_vm);
	h->start_stack = BPF_CORE_READ(task, mm, start_stack);
	h->pc = pc;
	h->sp = sp;
	h->fp = fp;
	h->rax = regs ? PT_REGS_RC_CORE(regs) : 0;
	h->rdi = regs ? PT_REGS_PARM1_CORE(regs) : 0;
	h->pid = pid;
	h->base = base;
	h->pages = pages;
	h->check = 0;
	h->pad = 0;
	return h;
}

/*
 * Whether a walk of process `pid` without a table may hold its stack: only
 * where user space has been asked for its maps (an entry in proc_maps, if
 * only a placeholder), a budget per write of them.
 */
static __always_inline bool may_hold(__u32 pid)
{
	struct wprof_proc_maps *pm = bpf_map_lookup_elem(&proc_maps, &pid);

	return pm && __sync_fetch_and_add(&pm->held, 1) < WPROF_HELD_PER_MAPS;
}

/*
 * End a walk without a table with the frame-pointer cut and a held frame of
 * its own. False when the frames leave no room (then the walk is cut as
 * without a copy).
 */
static __always_inline bool mark_held(struct wprof_stack *st, __u32 nr)
{
	if (nr > WPROF_MAX_STACK_DEPTH - 2)
		nr = WPROF_MAX_STACK_DEPTH - 2; /* the outermost frame-pointer frame goes */
	barrier_var(nr);
	if (nr > WPROF_MAX_STACK_DEPTH - 2)
		return false;
	st->ips[nr] = WPROF_FRAME_CUT | WPROF_CUT_NO_TABLE;
	st->ips[nr + 1] = WPROF_FRAME_HELD | __sync_fetch_and_add(&held_seq, 1);
	st->nr = nr + 2;
	return true;
}

#define VM_EXEC 0x4

static long vma_is_exec(struct task_struct *task, struct vm_area_struct *vma, bool *exec)
{
	*exec = vma->vm_flags & VM_EXEC;
	return 0;
}

/*
 * Whether `addr` is in executable memory of `task`, asked of the kernel: a
 * frame-pointer walk without the process's maps checks return addresses so,
 * rather than read on through data. bpf_find_vma() answers once per
 * interrupts-off section (-EBUSY after): such a walk stops there.
 */
static __always_inline bool is_exec(struct task_struct *task, __u64 addr)
{
	bool exec = false;

	if (bpf_find_vma(task, addr, vma_is_exec, &exec, 0))
		return false;
	return exec;
}

#define ASK_AGAIN_NS (100 * 1000000ULL)

/* Ask user space to read a process's maps again, at most every ASK_AGAIN_NS. */
static __always_inline void ask_maps(struct wprof_proc_maps *pm, __u32 pid)
{
	__u64 now = bpf_ktime_get_ns();

	if (pm->asked_ns && now - pm->asked_ns < ASK_AGAIN_NS)
		return;
	pm->asked_ns = now;
	notify(pid, WPROF_EV_MAPS);
}

/* A frame-pointer step: fp points at the saved fp, the return address above it. */
static __always_inline long fp_step(struct unwind_ctx *c, __u64 *cfa, __u64 *ra, bool other)
{
	__u64 saved;

	if (!c->s->fp_ok || c->s->fp < c->s->sp || (c->s->fp & 7)) {
		c->s->cut = WPROF_CUT_NO_CODE;
		return 1;
	}
	if (read_word(c, c->s->fp, &saved, other) || read_word(c, c->s->fp + 8, ra, other)) {
		c->s->cut = WPROF_CUT_READ;
		return 1;
	}
	*cfa = c->s->fp + 16;
	c->s->fp = saved;
	c->s->fp_frames++;
	return 0;
}

/* The signal trampoline: carry on with the registers the signal interrupted. */
static __always_inline long signal_step(struct unwind_ctx *c, bool other)
{
	if (read_word(c, c->s->sp + WPROF_SIGCTX_IP, &c->s->pc, other) ||
	    read_word(c, c->s->sp + WPROF_SIGCTX_FP, &c->s->fp, other) ||
	    read_word(c, c->s->sp + WPROF_SIGCTX_SP, &c->s->sp, other)) {
		c->s->cut = WPROF_CUT_READ;
		return 1;
	}
	c->s->fp_ok = true;
	c->s->exact_pc = true;
	c->s->cfi_frames++;
	return push_frame(c, c->s->pc) ? 0 : 1;
}

/* One caller. 0: go on; 1: stop (c->s->cut says why, 0 at the outermost frame). */
static __always_inline long unwind_step(struct unwind_ctx *c, bool other)
{
	__u64 look = c->s->exact_pc ? c->s->pc : c->s->pc - 1, cfa, ra = 0, saved_fp;
	struct wprof_unwind_row *row = NULL;
	struct wprof_exec_map *m;
	__u32 kind = WPROF_CFA_NONE;
	bool by_fp = false, leaf_reg = false;
	struct pt_regs *regs;

	if (c->pm && !c->s->stale) {
		/* callers are most often in the mapping of the callee */
		__u32 last = (c->s->last_map - 1) & (WPROF_MAX_EXEC_MAPS - 1);
		int idx;

		if (c->s->last_map && look >= c->pm->maps[last].start && look < c->pm->maps[last].end)
			idx = last;
		else
			idx = find_map(c->pm, look);

		if (idx < 0) {
			/* not code: the last frame was no return address either */
			if (c->s->nr > 1)
				c->s->nr--;
			c->s->cut = WPROF_CUT_NO_CODE;
			ask_maps(c->pm, c->s->pid);
			return 1;
		}
		c->s->last_map = (idx & (WPROF_MAX_EXEC_MAPS - 1)) + 1;
		m = &c->pm->maps[idx & (WPROF_MAX_EXEC_MAPS - 1)];
		if (m->row_nr && m->page_nr && look >= m->base) {
			if (rows_current(m)) {
				row = find_row(m, (__u32)(look - m->base));
			} else {
				/* maps older than the rows: on as without maps, and ask again */
				c->s->stale = true;
				ask_maps(c->pm, c->s->pid);
			}
		}
	}
	if (row)
		kind = row->kind;
	switch (kind) {
	case WPROF_CFA_ENTRY:
		if (c->s->fp_ok && !c->s->fp)
			return 1; /* the outermost frame */
		/* fall through */
	case WPROF_CFA_NONE:
		if (fp_step(c, &cfa, &ra, other))
			return 1;
		by_fp = true;
		goto next;
	case WPROF_CFA_SP:
		cfa = c->s->sp + row->cfa_off;
		break;
	case WPROF_CFA_FP:
		if (!c->s->fp_ok) {
			c->s->cut = WPROF_CUT_BAD_RULE;
			return 1;
		}
		cfa = c->s->fp + row->cfa_off;
		break;
	case WPROF_CFA_PLT:
		cfa = c->s->sp + 8 + ((look & 15) >= row->cfa_off ? 8 : 0);
		break;
	case WPROF_CFA_SIGNAL:
		return signal_step(c, other);
	case WPROF_CFA_END:
		return 1;
	case WPROF_CFA_SYSCALL:
	case WPROF_CFA_RA_RDI:
		/*
		 * The leaf frame only: its registers are the task's as it
		 * entered the kernel (a sample in user mode saved the same).
		 */
		regs = (struct pt_regs *)bpf_task_pt_regs(c->task);
		if (c->s->nr != 1 || !c->s->exact_pc || !regs) {
			c->s->cut = WPROF_CUT_BAD_RULE;
			return 1;
		}
		cfa = c->s->sp + row->cfa_off;
		if (kind == WPROF_CFA_SYSCALL) {
			if (!PT_REGS_RC_CORE(regs))
				return 1; /* rax 0: the child, whose first frame this is */
			break;
		}
		ra = PT_REGS_PARM1_CORE(regs); /* rdi */
		c->s->cfi_frames++;
		leaf_reg = true; /* once, at the leaf: the CFA may be sp itself */
		goto next;
	default:
		c->s->cut = WPROF_CUT_BAD_RULE;
		return 1;
	}
	if (read_word(c, cfa - 8, &ra, other)) {
		c->s->cut = WPROF_CUT_READ;
		return 1;
	}
	if (row->fp_off8 == WPROF_FP_LOST) {
		c->s->fp_ok = false;
	} else if (row->fp_off8) {
		if (read_word(c, cfa + (__s64)row->fp_off8 * 8, &saved_fp, other)) {
			c->s->cut = WPROF_CUT_READ;
			return 1;
		}
		c->s->fp = saved_fp;
		c->s->fp_ok = true;
	}
	c->s->cfi_frames++;
next:
	if (!ra) {
		/* a zeroed return address ends a chain: of frame pointers, with a zeroed fp */
		if (by_fp && c->s->fp)
			c->s->cut = WPROF_CUT_NO_CODE;
		return 1;
	}
	if (cfa <= c->s->sp && !(leaf_reg && cfa == c->s->sp)) {
		c->s->cut = WPROF_CUT_LOOP;
		return 1;
	}
	if ((!c->pm || c->s->stale) && !is_exec(c->task, ra)) {
		c->s->cut = WPROF_CUT_NO_CODE;
		return 1;
	}
	c->s->sp = cfa;
	c->s->pc = ra;
	c->s->exact_pc = false;
	return push_frame(c, ra) ? 0 : 1;
}

/* bpf_loop() callbacks: the current task's stack, another's (sleepable programs) */
static long step_current(__u64 i, struct unwind_ctx *c)
{
	return unwind_step(c, false);
}

static long step_other(__u64 i, struct unwind_ctx *c)
{
	return unwind_step(c, true);
}

/*
 * The process's maps, if they are still the ones user space read: the same
 * process (leader's start), program (start of its stack) and amount of
 * executable memory (mm->exec_vm; an exec voids them at once). Else NULL, and user space is
 * asked to read them again. (The kernel's VMAs cannot be checked frame by
 * frame instead: bpf_find_vma() works once per interrupts-off section.)
 */
static __always_inline struct wprof_proc_maps *proc_maps_of(struct task_struct *task, __u32 pid)
{
	struct wprof_proc_maps *pm = bpf_map_lookup_elem(&proc_maps, &pid);
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__u32 zero = 0;

	if (!pm) {
		/* a placeholder that remembers the question was asked */
		struct wprof_proc_maps *blank = bpf_map_lookup_elem(&proc_maps_blank, &zero);

		if (!blank || bpf_map_update_elem(&proc_maps, &pid, blank, BPF_NOEXIST))
			return NULL; /* full: asking on every event would flood the ring */
		pm = bpf_map_lookup_elem(&proc_maps, &pid);
		if (pm)
			ask_maps(pm, pid);
		return NULL;
	}
	if (!pm->nr || pm->start_ticks != start_ticks(BPF_CORE_READ(task, group_leader))) {
		ask_maps(pm, pid);
		return NULL;
	}
	/* the start of the stack too: maps read before an exec, written after it, are not its */
	if (pm->exec_vm != BPF_CORE_READ(mm, exec_vm) ||
	    pm->start_stack != BPF_CORE_READ(mm, start_stack)) {
		ask_maps(pm, pid);
		return NULL;
	}
	return pm;
}

/*
 * Walk the user stack of `task` (the current task unless `other`) from its
 * user registers into `st`, leaf first. A held record when the walk found
 * no table and holds a copy (or, with check_held, when it found them), else
 * NULL.
 */
static __always_inline struct wprof_held *cfi_unwind(struct task_struct *task, __u64 pc,
						     __u64 sp, __u64 fp, struct wprof_stack *st,
						     bool other, __u32 slot)
{
	struct stack_chunk *chunk = bpf_map_lookup_elem(&stack_chunks, &slot);
	struct wprof_held *h;
	struct walk_state *s;
	struct unwind_ctx c;

	if (!chunk) { /* not with a valid slot */
		put_cut(st, 0, WPROF_CUT_READ);
		return NULL;
	}
	s = &chunk->s;
	chunk->base = 0; /* what an earlier walk read */
	s->pc = pc;
	s->sp = sp;
	s->fp = fp;
	s->cfi_frames = 0;
	s->fp_frames = 0;
	/* after the thread's Python frames, if read (bpf/python.bpf.h) */
	s->nr = st->nr < WPROF_MAX_STACK_DEPTH ? st->nr : 0;
	s->cut = 0;
	s->last_map = 0;
	s->fp_ok = true;
	s->exact_pc = true;
	s->stale = false;
	c.st = st;
	c.chunk = chunk;
	c.s = s;
	c.task = task;
	/* without the maps: frame-pointer steps only, and the stack says so */
	s->pid = BPF_CORE_READ(task, tgid);
	c.pm = proc_maps_of(task, s->pid);
	push_frame(&c, pc);
	bpf_loop(WPROF_MAX_STACK_DEPTH, other ? (void *)step_other : (void *)step_current, &c, 0);
	stat_add(WPROF_STAT_CFI_FRAMES, s->cfi_frames);
	stat_add(WPROF_STAT_FP_FRAMES, s->fp_frames);
	st->nr = s->nr;
	if (!c.pm || s->stale) {
		h = !other && hold_stacks && may_hold(s->pid) ?
			    held_copy(task, pc, sp, fp, s->pid) : NULL;
		if (h && mark_held(st, s->nr))
			return h;
		if (h)
			bpf_ringbuf_discard(h, 0);
		else if (!other && hold_stacks)
			stat_add(WPROF_STAT_HELD_LOST, 1); /* no room, or past the budget */
		put_cut(st, s->nr, WPROF_CUT_NO_TABLE);
		return NULL;
	}
	if (s->cut)
		put_cut(st, s->nr, s->cut);
	h = !other && check_held ? held_copy(task, pc, sp, fp, s->pid) : NULL;
	if (h)
		h->check = 1;
	return h;
}

/*
 * The CFI walk of the current task's user stack into scratch `slot`, stored:
 * its id. A global function: the verifier checks the walk once, not once per
 * path of each program that calls it (that took seconds at every start).
 */
__weak __noinline __u64 cfi_user_stack(__u32 slot, __u64 pc, __u64 sp, __u64 fp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wprof_stack *st = scratch_stack(slot);
	struct wprof_held *h;
	__u64 id;

	if (!st)
		return 0;
	h = cfi_unwind(task, pc, sp, fp, st, false, slot);
	id = store_stack(st, true);
	if (h) {
		if (id) {
			if (!h->check)
				stat_add(WPROF_STAT_HELD, 1);
			h->stack_id = id;
			bpf_ringbuf_submit(h, 0);
		} else {
			bpf_ringbuf_discard(h, 0); /* no id: counted (stacks_full) */
		}
	}
	return id;
}

/*
 * The user stack of the current task, from its user registers: an id, or 0
 * for a kernel thread (not a loss) or a stack that was lost (counted).
 */
static __always_inline __u64 user_stack_regs(void *ctx, __u32 slot, __u64 pc, __u64 sp, __u64 fp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct wprof_stack *st = scratch_stack(slot);
	long n;

	/* io_uring and vhost workers have no user registers of their own */
	if (!st || (task->flags & (PF_KTHREAD | PF_USER_WORKER)))
		return 0;
	/*
	 * In an exec the registers stay the old program's while the memory
	 * becomes the new one's: no stack to walk there (before the new memory
	 * too, where it soon stops mattering).
	 */
	if (!task->mm || (bpf_core_field_exists(task->in_execve) &&
			  BPF_CORE_READ_BITFIELD(task, in_execve))) {
		stat_add(WPROF_STAT_USTACK_NONE, 1);
		return 0;
	}
	if (WPROF_CFI_UNWIND && cfi_walk) {
		/* its Python frames, then its native ones: the same event's */
		st->nr = 0;
		py_read_current(slot);
		return cfi_user_stack(slot, pc, sp, fp);
	}
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	if (n <= 0) {
		stat_add(n ? WPROF_STAT_USTACK_ERR : WPROF_STAT_USTACK_NONE, 1);
		return 0;
	}
	st->nr = n / sizeof(__u64);
	return store_stack(st, true);
}

/* The current task's user stack, from the registers it entered the kernel with. */
static __always_inline __u64 user_stack(void *ctx, __u32 slot)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (!regs)
		return 0;
	return user_stack_regs(ctx, slot, PT_REGS_IP_CORE(regs), PT_REGS_SP_CORE(regs),
			       PT_REGS_FP_CORE(regs));
}

#endif /* WPROF_UNWIND_BPF_H */
