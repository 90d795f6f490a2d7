/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one header shared by the BPF programs and user space: map keys and
 * values, limits, enums. Only __u32/__u64 types, explicit padding, so the
 * layout is identical on both sides.
 */
#ifndef WPROF_H
#define WPROF_H

/* bpf_get_stack() is limited by kernel.perf_event_max_stack (127 by default). */
#define WPROF_MAX_STACK_DEPTH 127
#define WPROF_COMM_LEN 16

/*
 * What a thread was doing while the time in a key was spent. Off-CPU time is
 * split by the scheduler state the thread left the CPU in, and at its wakeup:
 * the blocked part goes to SLEEP or DISK, the wait for a CPU after it to RUNQ.
 */
enum wprof_state {
	WPROF_ON_CPU = 0,
	WPROF_OFF_SLEEP = 1, /* TASK_INTERRUPTIBLE (and TASK_IDLE) */
	WPROF_OFF_DISK = 2,  /* TASK_UNINTERRUPTIBLE: usually block I/O */
	WPROF_OFF_RUNQ = 3,  /* runnable, waiting for a CPU */
	/*
	 * Current on a CPU the hypervisor gave to something else (steal): a
	 * thread's steal is its off_ns[WPROF_STEAL]; a key of this state has
	 * the part a sample saw, at the sample's stacks, and user space shares
	 * the rest out by the thread's on-CPU samples
	 */
	WPROF_STEAL = 4,
	/*
	 * Runnable, but its cgroup (or an ancestor) had used its CPU quota
	 * (CFS bandwidth): the first part of a wait for a CPU, while the group
	 * was throttled; the wait after it is WPROF_OFF_RUNQ
	 */
	WPROF_OFF_THROTTLED = 5,
	WPROF_STATE_CNT,
};

/* A stack id is a 64-bit hash of the frames; 0 means "no stack". */
struct wprof_key {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 ustack_id;
	__u64 kstack_id;
	__u32 state; /* enum wprof_state */
	/*
	 * The low 32 bits of the task's start time (ns since boot): after the
	 * pids wrapped, two threads of one tid are two keys, two threads.
	 */
	__u32 start_id;
	/*
	 * When (--slice): the time is in slices [slice, slice + span) of the
	 * window, slice_ns each, spread evenly over them. An off-CPU part is
	 * split exactly at slice edges: its first slice, the whole ones after
	 * it (one key), its last; only the last piece counts the interval.
	 */
	__u32 slice;
	__u32 span;
};

/*
 * Off-CPU intervals shorter than the walk threshold (walk_tau_ns) have their
 * stacks walked with probability length / threshold: a walked interval then
 * stands for 1/p intervals like it, and its time for 1/p times as much (the
 * weight, in 1/WPROF_WEIGHT_ONE units). Longer intervals are always walked,
 * with weight WPROF_WEIGHT_ONE: their count, total and max are exact.
 */
#define WPROF_WEIGHT_SHIFT 16
#define WPROF_WEIGHT_ONE (1ULL << WPROF_WEIGHT_SHIFT)

struct wprof_val {
	__u64 count;    /* on-CPU: samples; off-CPU: intervals walked */
	__u64 total_ns; /* off-CPU: the intervals' time, each weighed; on-CPU: 0 */
	__u64 max_ns;   /* longest single interval walked (off-CPU) */
	__u64 weight;   /* off-CPU: intervals stood for, in 1/WPROF_WEIGHT_ONE */
	__u64 exact_ns; /* off-CPU: the part of total_ns from intervals walked exactly */
	__u64 pad;      /* a struct wprof_time's size: a time key's value is one */
};

struct wprof_stack {
	__u32 nr; /* frames used in ips[] */
	__u32 pad;
	__u64 ips[WPROF_MAX_STACK_DEPTH];
};

/*
 * In-kernel user stack unwinding (x86-64): user space turns each executable
 * file's .eh_frame into rows, one per address range with one rule, sorted by
 * address, and tells the BPF side which file is mapped where in each target
 * process. The walk then recovers every caller from the code's own CFI, also
 * through code built without frame pointers, at every event: nothing is
 * copied from one event to serve another.
 */
enum wprof_cfa_kind {
	WPROF_CFA_NONE = 0,   /* no CFI covers this code: a frame-pointer step */
	WPROF_CFA_SP = 1,     /* CFA = sp + cfa_off */
	WPROF_CFA_FP = 2,     /* CFA = fp + cfa_off */
	WPROF_CFA_PLT = 3,    /* PLT stub: CFA = sp + 8, + 8 once (pc & 15) >= cfa_off */
	WPROF_CFA_SIGNAL = 4, /* signal trampoline: the interrupted registers are at sp */
	WPROF_CFA_END = 5,    /* return address undefined: the thread's outermost frame */
	WPROF_CFA_BAD = 6,    /* a rule the walk cannot follow: the walk ends here */
	/*
	 * CFA = sp + cfa_off, the return address in rdi: a function that took
	 * it off the stack (glibc's vfork(), whose child overwrites the slot).
	 * Followed in the leaf frame only, whose rdi the registers hold.
	 */
	WPROF_CFA_RA_RDI = 7,
	/*
	 * From a syscall to the ret after it, in code no CFI covers where the
	 * code itself shows nothing moves rsp (glibc's clone() and clone3(),
	 * which end their FDE before the syscall, the child's rules being
	 * other): CFA = sp + cfa_off, the return address below it, for the
	 * caller (rax not 0: in the syscall, or back with the child's id); the
	 * child's (rax 0) first frame. Followed in the leaf frame only.
	 */
	WPROF_CFA_SYSCALL = 8,
	/*
	 * A file's entry point where no CFI covers it (the loader's _start,
	 * which calls into code with CFI): a zeroed frame pointer there marks
	 * the outermost frame, as the x86-64 ABI has a process start with it;
	 * else a frame-pointer step, as WPROF_CFA_NONE (the last kind: a fuzz
	 * harness checks built rows against it)
	 */
	WPROF_CFA_ENTRY = 9,
};

/*
 * WPROF_CFA_SIGNAL: offsets of the interrupted registers in the rt_sigframe's
 * ucontext at the trampoline's sp (x86-64 ABI), for both walkers
 */
#define WPROF_SIGCTX_FP 120
#define WPROF_SIGCTX_SP 160
#define WPROF_SIGCTX_IP 168

/* fp_off8 value: the caller's frame pointer cannot be recovered */
#define WPROF_FP_LOST (-128)

struct wprof_unwind_row {
	__u32 pc;      /* first address of the range, from the table's base */
	__u16 cfa_off;
	__u8 kind;     /* enum wprof_cfa_kind */
	__s8 fp_off8;  /* caller's fp saved at CFA + 8 * fp_off8; 0: fp unchanged */
};

/*
 * The row before a file's page index in unwind_rows: its pc field holds the
 * tag of the rows that follow, which user space changes when it gives their
 * room to another file's (src/unwtab.c). Never the kind of another row.
 */
#define WPROF_ROW_HEADER 0xff

/* An executable mapping of a process and the rows of the code it maps. */
struct wprof_exec_map {
	__u64 start, end; /* [start, end) */
	__u64 base;       /* row pc = address - base */
	__u32 row_first;  /* index in unwind_rows */
	__u32 row_nr;     /* 0: no CFI (JIT, Go): frame-pointer steps */
	/*
	 * A page index before the rows, so that a walk searches a handful of
	 * rows, not all: entry p (in unwind_rows, its pc field) is the index
	 * of the row in force at row pc p << WPROF_PAGE_SHIFT, or
	 * WPROF_NO_ROW when none is.
	 */
	__u32 page_first;
	__u32 page_nr;
	/*
	 * The rows are these maps' only while the header row before the page
	 * index (page_first - 1) is a WPROF_ROW_HEADER with this tag: maps
	 * copied at a fork may outlive the rows they name.
	 */
	__u32 tag;
	__u32 pad;
};
#define WPROF_PAGE_SHIFT 10
#define WPROF_NO_ROW 0xffffffffU

#define WPROF_MAX_EXEC_MAPS 128
struct wprof_proc_maps {
	__u64 start_ticks; /* the leader's start in clock ticks since boot: tells a reused pid */
	__u64 exec_vm;    /* pages mapped executable (mm->exec_vm) when the maps were read */
	__u64 asked_ns;   /* when BPF last asked user space to read them again; 0: not yet */
	__u32 nr;         /* maps used, sorted by start */
	__u32 held;       /* stacks held since user space wrote these (WPROF_HELD_PER_MAPS) */
	/* mm->start_stack as read with the maps (user space: struct wprof_held's match) */
	__u64 start_stack;
	struct wprof_exec_map maps[WPROF_MAX_EXEC_MAPS];
};

/*
 * Why a user stack walk stopped before the thread's outermost frame. A walk
 * that stops early gets a last (root) frame WPROF_FRAME_CUT | reason, which
 * user space prints as a frame of its own, and is counted.
 */
enum wprof_cut {
	WPROF_CUT_NO_TABLE = 1, /* the process's code was not known yet: frame pointers only */
	WPROF_CUT_NO_CODE = 2,  /* a return address outside every executable mapping */
	WPROF_CUT_BAD_RULE = 3, /* CFI the walk cannot follow */
	WPROF_CUT_READ = 4,     /* the stack could not be read */
	WPROF_CUT_LOOP = 5,     /* the stack pointer did not move up */
	WPROF_CUT_DEPTH = 6,    /* deeper than WPROF_MAX_STACK_DEPTH */
	WPROF_CUT_COPY = 7,     /* a held stack (below) went on past the part copied */
	WPROF_CUT_CNT,
};
#define WPROF_FRAME_CUT 0xffffffffffffff00ULL

/*
 * Held stacks. A walk that finds no table for its process's code yet (a
 * program just started: user space has not read its maps, or is building
 * the tables) keeps its frame-pointer frames, then a last frame
 * WPROF_FRAME_HELD | n, unique to the walk, so that its stack id is too;
 * and it sends a copy of the thread's stack and registers (struct
 * wprof_held) to user space, which walks the copy with the tables once
 * they are ready and gives the id those frames instead. Only the event
 * that walked it names the id: the frames are its own.
 */
#define WPROF_FRAME_HELD 0xfffffffe00000000ULL
#define WPROF_IS_HELD(ip) ((ip) >> 32 == WPROF_FRAME_HELD >> 32)
/*
 * At most so many held per write of a process's maps: a process whose maps
 * keep not matching (full maps, code that changes all the time) does not
 * copy its stack at every event
 */
#define WPROF_HELD_PER_MAPS 256
#define WPROF_HELD_PAGES 16 /* of stack copied: from the page 1 KiB below sp, up */
#define WPROF_HELD_PAGE 4096

struct wprof_held {
	__u64 stack_id;    /* the walk's stack, ending in its WPROF_FRAME_HELD frame */
	__u64 start_ticks; /* the process's, as struct wprof_proc_maps has it */
	__u64 exec_vm;     /* mm->exec_vm at the walk: the maps to walk it with have the same */
	__u64 start_stack; /* mm->start_stack: ... and this, which an exec changes */
	__u64 pc, sp, fp;  /* the registers the walk started from */
	__u64 rax, rdi;    /* the task's user registers (the leaf rules that read them) */
	/*
	 * data[] holds the pages from base (page-aligned) on; bit i of pages:
	 * page i could be read (an untouched or unmapped one cannot). Below
	 * sp: a function's epilogue may restore the caller's rbp from there
	 */
	__u64 base;
	__u32 pages;
	__u32 pid;         /* tgid */
	/*
	 * WPROF_HELD=check: a copy of a walk the kernel made with the tables,
	 * stack_id its frames, for user space to walk the copy and compare
	 */
	__u32 check;
	__u32 pad;
	__u8 data[WPROF_HELD_PAGES * WPROF_HELD_PAGE];
};

/*
 * CPython frames (bpf/python.bpf.h). In a process user space found to run a
 * CPython it knows (struct wprof_py_proc), a user stack walked from the
 * thread's registers is followed by the thread's Python frames, leaf first,
 * two words each: WPROF_FRAME_PY | the id of its code object (struct
 * wprof_py_code) (| WPROF_PY_ENTRY on the first frame a
 * _PyEval_EvalFrameDefault activation ran: the last of that activation's
 * frames, leaf first), then WPROF_FRAME_PY_AT | the instruction it is at, as
 * an offset from the code object. User space puts each activation's frames
 * in place of its _PyEval_EvalFrameDefault frame. A frame that could not be
 * read ends them: WPROF_FRAME_PY_CUT | why.
 */
#define WPROF_FRAME_PY 0xfffd000000000000ULL
#define WPROF_FRAME_PY_AT 0xfffc000000000000ULL
#define WPROF_FRAME_PY_CUT 0xfffb000000000000ULL
#define WPROF_PY_ENTRY (1ULL << 47)
#define WPROF_PY_ADDR(w) ((w) & (WPROF_PY_ENTRY - 1))
#define WPROF_PY_KIND(w) ((w) >> 48)
#define WPROF_IS_PY_WORD(w) ((w) >> 48 >= 0xfffb && (w) >> 48 <= 0xfffd)

enum wprof_py_cut {
	WPROF_PY_CUT_READ = 1,   /* a frame or the thread's state could not be read */
	WPROF_PY_CUT_DEPTH = 2,  /* no room left in the stack */
	WPROF_PY_CUT_THREAD = 3, /* the thread's state was not found */
	WPROF_PY_CUT_CNT,
};

/* No such field in this version (struct wprof_py_proc). */
#define WPROF_PY_NONE 0xffff

/*
 * How to read the Python frames of a process: where its _PyRuntime is, and
 * the offsets of the fields on the way, by its CPython version (user space:
 * src/pyproc.c, from the version's headers).
 */
struct wprof_py_proc {
	__u64 start_ticks;   /* the process's (see struct wprof_proc_maps) */
	__u64 start_stack;   /* mm->start_stack of the program found: another exec'd has another */
	__u64 runtime;       /* the address of _PyRuntime */
	__u16 interp_head;   /* _PyRuntimeState.interpreters.head */
	__u16 threads_head;  /* PyInterpreterState.threads.head */
	__u16 ts_next;       /* PyThreadState.next */
	__u16 ts_native_tid; /* PyThreadState.native_thread_id */
	__u16 ts_frame;      /* PyThreadState.cframe (3.11, 3.12) or .current_frame (3.13) */
	__u16 cframe_frame;  /* _PyCFrame.current_frame; WPROF_PY_NONE: ts_frame is the frame */
	__u16 fr_code;       /* _PyInterpreterFrame.f_code (f_executable) */
	__u16 fr_previous;
	__u16 fr_instr;      /* prev_instr (instr_ptr) */
	__u16 fr_entry;      /* is_entry (3.11), else owner */
	__u16 co_qualname;   /* PyCodeObject's */
	__u16 co_filename;
	__u16 co_firstlineno;
	__u16 co_linetable;
	__u16 str_ascii;     /* sizeof(PyASCIIObject): where a compact ASCII string's text is */
	__u16 str_compact;   /* sizeof(PyCompactUnicodeObject): ... any other compact string's */
	__u8 entry_kind;     /* enum wprof_py_entry */
	/*
	 * 3.10: a thread state names its thread by pthread_self() (its fs
	 * base), not its tid; a frame's instruction is an index (f_lasti)
	 */
	__u8 tid_is_fsbase;
	__u8 instr_is_index;
	__u8 line_kind;      /* enum wprof_py_lines: how its location tables are read */
	/* PyCodeObject.co_code_adaptive: where its instructions are (for the lines) */
	__u16 code_units;
	__u16 pad;
};

/* How a version's location table (co_linetable) gives an instruction's line */
enum wprof_py_lines {
	WPROF_PY_LINES_311 = 0,      /* 3.11 on: the frame's word is the instruction it is at */
	WPROF_PY_LINES_310 = 1,      /* 3.10's (bytes, line change) pairs; the word an index */
};

/* How the frames of one _PyEval_EvalFrameDefault activation are told apart */
enum wprof_py_entry {
	WPROF_PY_ENTRY_FLAG = 0,  /* fr_entry: is_entry, set on its first (3.11) */
	WPROF_PY_ENTRY_OWNER = 1, /* fr_entry: owner, 3 on the frame below its first (3.12 on) */
	WPROF_PY_ENTRY_EVERY = 2, /* each frame is one activation's (3.10) */
};

/*
 * A code object as first seen in a process (its id names it in stacks),
 * with its names read then: they stay right once it is gone. Keyed by what
 * tells a code object from a later one at the same address. User space
 * takes the entries at every drain (and deletes them).
 */
struct wprof_py_code_key {
	__u32 pid; /* tgid */
	__u32 pad;
	__u64 code, qualname, filename, linetable; /* addresses */
};

#define WPROF_PY_NAME_LEN 64
#define WPROF_PY_FILE_LEN 128
#define WPROF_PY_LINES_LEN 512
struct wprof_py_code {
	__u64 id;          /* a hash of its key, 47 bits (bpf/python.bpf.h: py_code_hash()) */
	__u32 firstlineno;
	__u32 pad0;
	__u16 name_len, file_len;  /* bytes in name[], file[] */
	__u8 name_kind, file_kind; /* bytes per character (1, 2, 4); 0: could not be read */
	__u8 name_cut, file_cut;   /* longer than the room */
	__u16 lines_len;           /* bytes in lines[]: the start of co_linetable */
	__u16 code_units;          /* of its process's version: see struct wprof_py_proc */
	__u8 line_kind;
	__u8 pad[7];
	char name[WPROF_PY_NAME_LEN];
	char file[WPROF_PY_FILE_LEN];
	/* its location table (the line of each instruction), as far as it fits */
	unsigned char lines[WPROF_PY_LINES_LEN];
};

/* A closed off-CPU interval that was walked, for the stacks. */
struct wprof_interval {
	__u64 start;     /* when it began: unique per thread; 0: none */
	__u64 weight;    /* see struct wprof_val */
	__u64 kstack_id;
	__u64 ns[2];     /* its blocked part (in `state`), its wait for a CPU */
	__u32 state;
	__u32 pad;
};

/*
 * An off-CPU interval at least long_block_ns long, sent whole to user space
 * as its stacks are added (the `blocks` ring buffer): the timeline's "when".
 */
struct wprof_long_block {
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 start_id;  /* see struct wprof_key */
	__u32 state;     /* of its blocked part (enum wprof_state) */
	__u64 start;     /* when it began (bpf_ktime_get_ns()) */
	__u64 ns[2];     /* its blocked part, its wait for a CPU */
	__u64 ustack_id;
	__u64 kstack_id;
	/* --wakers: who woke it (0: not known) */
	__u64 waker_ustack_id, waker_kstack_id;
	__u32 waker_pid;
	__u32 pad;
	char waker_comm[WPROF_COMM_LEN];
};

/* Log2 histogram of block durations: bucket k holds [2^k, 2^(k+1)) us. */
#define WPROF_HIST_SLOTS 32

/*
 * Arithmetic both sides do, in one place: the BPF programs as they close an
 * interval, user space for the intervals still open at the window's end.
 * Inlined: a BPF program may not call what it cannot see.
 */
#define WPROF_INLINE static inline __attribute__((always_inline))

/* The histogram bucket of a block of @us: floor(log2(@us)) (0 for 0), the last at most. */
WPROF_INLINE __u32 wprof_hist_slot(__u64 us)
{
	__u32 r = 0, shift;

	/* a binary search without branches: the verifier walks it once */
	shift = (us > 0xffffffffULL) << 5;
	us >>= shift;
	r |= shift;
	shift = (us > 0xffff) << 4;
	us >>= shift;
	r |= shift;
	shift = (us > 0xff) << 3;
	us >>= shift;
	r |= shift;
	shift = (us > 0xf) << 2;
	us >>= shift;
	r |= shift;
	shift = (us > 0x3) << 1;
	us >>= shift;
	r |= shift;
	r |= us >> 1;
	return r < WPROF_HIST_SLOTS ? r : WPROF_HIST_SLOTS - 1;
}

/*
 * Where an off-CPU interval from @from to @end, in @state, splits into the
 * time blocked and the wait for a CPU after it: at its wakeup @wake (0:
 * unknown) if that is within it; a runqueue interval is all wait, one
 * without a known wakeup all blocked.
 */
WPROF_INLINE __u64 wprof_interval_split(__u64 from, __u64 end, __u64 wake, __u32 state)
{
	if (state == WPROF_OFF_RUNQ)
		return from;
	if (wake && wake >= from && wake <= end)
		return wake;
	return end;
}

/*
 * Per-thread bookkeeping, kept until the end of the recording. Ordered for
 * the cache: what every switch of the thread reads or writes is in its first
 * 224 bytes (and one word of hist), the rest after. A map's values are not
 * aligned to cache lines, so the offsets below are a guide, not a promise.
 */
struct wprof_thread {
	__u32 pid;
	__u32 tid;
	__u32 off_state;      /* enum wprof_state of the current interval */
	__u32 walk;           /* WPROF_WALK_* of the current interval */
	__u64 oncpu_since_ns; /* 0 while off-CPU */
	__u64 off_since_ns;   /* 0 while on-CPU */
	__u64 wake_ns;        /* wakeup time of the current off-CPU interval */
	__u64 on_ns;          /* exact on-CPU time, from switch events */
	__u64 ustack_id;      /* stacks the thread left the CPU with */
	__u64 kstack_id;
	__u64 exit_ns;        /* 0 while alive */
	/* its run-queue wait in all as it left the CPU (sched_info.run_delay) */
	__u64 run_delay_out;
	/* its run time in all as it last got a CPU (se.sum_exec_runtime); 0: unknown */
	__u64 exec_in;
	/* its CPU's steal clock (rq->prev_steal_time_rq) as it got the CPU; 0: unknown */
	__u64 steal_in;
	__u32 steal_cpu;      /* ... and which CPU that was */
	/* its process's mm->exec_vm when a switch-out last found its maps current */
	__u32 maps_exec_vm;
	/* when steal_in was last moved on by a sample of the run (0: not since it began) */
	__u64 steal_since;
	__u64 blocks;         /* intervals in SLEEP or DISK */
	__u64 max_block_ns;   /* longest of them (blocked part) */
	/* exact totals, whatever the stack maps and filters keep (and the steal in its runs) */
	__u64 off_ns[WPROF_STATE_CNT];
	/* --slice: the end of slice acc_slice (0: none yet), checked at every switch */
	__u64 acc_edge;
	/* a closed, walked interval whose user stack is walked as the thread resumes */
	struct wprof_interval pend;
	/* --wakers: who woke the current interval */
	__u64 waker_ustack_id, waker_kstack_id;
	/* parts of closed intervals that passed the filters, walked or not */
	__u64 kept_ns[WPROF_STATE_CNT];
	__u32 waker_pid;
	__u32 start_id;       /* of the task: see struct wprof_key */
	__u64 lost_ns;        /* walked parts a full map had no room for */
	__u64 first_ns;       /* first seen inside the window */
	/* the window's end: stacks of the interval open since end_gen (off_since_ns) */
	__u64 end_gen;
	/* its blocks (blocked parts) by length; summed per process by user space */
	__u32 hist[WPROF_HIST_SLOTS];
	__u64 end_ustack_id, end_kstack_id;
	char waker_comm[WPROF_COMM_LEN];
	char comm[WPROF_COMM_LEN];
	/*
	 * --slice: the slice it has time in not yet in a WPROF_KEY_TIME key,
	 * and its totals as that time began: the time is its totals (on_ns,
	 * off_ns[]) less these, by state (runs as WPROF_ON_CPU, steal in them)
	 */
	__u32 acc_slice;
	__u32 acc_pad;
	__u64 acc_base[WPROF_STATE_CNT];
	/*
	 * A wait for a CPU that began in a cgroup below the root: its group's
	 * run queue then (a kernel address; 0: none), and the time that run
	 * queue had been throttled in all, by its clock (bpf/thread.bpf.h:
	 * throttle_out())
	 */
	__u64 thr_cfs_rq;
	__u64 thr_out;
};

/*
 * A key of this state (ustack_id, kstack_id 0) holds its thread's exact time
 * in slices [slice, slice + span) (spread evenly), by state: its value is a
 * struct wprof_time, not a struct wprof_val (the same size). Added to once
 * per slice a thread moves on from, not at every switch.
 */
#define WPROF_KEY_TIME 16
struct wprof_time {
	__u64 ns[WPROF_STATE_CNT];
};

/*
 * wprof_thread.tid of a thread slot that holds no thread (no tid has the
 * high bit): one being written (bpf/thread.bpf.h: slot_fill()), or one
 * whose thread's entry moved out, with the drain epoch then in the low bits
 */
#define WPROF_SLOT_MARK 0x80000000u
#define WPROF_SLOT_CLAIMED 0xffffffffu
#define WPROF_SLOT_EPOCH_MASK 0x3fffffffu

/* wprof_thread.walk: what is known of the current off-CPU interval's stacks */
enum wprof_walk {
	WPROF_WALK_USER = 1,     /* ustack_id is this interval's */
	WPROF_WALK_KERNEL = 2,   /* kstack_id is this interval's */
	WPROF_WALK_DEFER = 4,    /* the user stack is walked in the thread's context, later */
};

/* --wakers: blocked time keyed by the blocked stacks and the waker's. */
struct wprof_wake_key {
	struct wprof_key blocked;
	__u64 waker_ustack_id;
	__u64 waker_kstack_id;
	__u32 waker_pid; /* tgid */
	__u32 pad;
	char waker_comm[WPROF_COMM_LEN];
};

/*
 * Who ran instead: each CPU keeps its recent runs, summed by runner in
 * segments of time (bpf/ran.bpf.h), written at every switch; as a target
 * thread gets a CPU after a wait for one, that CPU's runners during the wait
 * are added to `ran`, by the waiting thread and the runner. The part of the
 * wait older than the CPU's oldest segment goes to the runner tid
 * WPROF_RAN_NOT_KNOWN.
 */
#define WPROF_RAN_SEGS 64        /* segments a CPU keeps: a power of 2 */
#define WPROF_RAN_SLOTS 4        /* runners a segment holds */
#define WPROF_RAN_SEG_NS 1000000 /* a segment takes no run that starts later than this in it */
#define WPROF_RAN_NOT_KNOWN 0xffffffffu

struct wprof_ran_key {
	__u32 pid; /* the waiting thread: tgid, tid, start_id (see struct wprof_key) */
	__u32 tid;
	__u32 start_id;
	__u32 runner_pid; /* tgid of the thread that had the CPU (0: idle) */
	__u32 runner_tid;
	__u32 pad;
};

struct wprof_ran_val {
	__u64 ns;
	char comm[WPROF_COMM_LEN]; /* the runner's, as it got the CPU (first run seen) */
};

/* A CPU's times not yet added to `ran`: a direct-mapped cache by key */
#define WPROF_RAN_PEND_BITS 4
#define WPROF_RAN_PEND (1 << WPROF_RAN_PEND_BITS)
struct wprof_ran_pend {
	struct wprof_ran_key key;
	__u64 ns; /* 0: a free slot */
	char comm[WPROF_COMM_LEN];
};

/* A runner of a segment, and its time in it */
struct wprof_ran_slot {
	__u32 pid, tid; /* tgid and tid; 0, 0: the CPU was idle */
	__u64 ns;
	char comm[WPROF_COMM_LEN];
};

/*
 * Runs on a CPU from `start` to the next segment's start (the newest: to the
 * ring's `last`), summed by runner: a run goes to the segment it ends in,
 * which began no later than the run did.
 */
struct wprof_ran_seg {
	__u64 start; /* 0: not used yet */
	__u32 nr;    /* slots used */
	__u32 pad;
	struct wprof_ran_slot slots[WPROF_RAN_SLOTS];
};

/* A CPU's runs (a `ran_rings` value) */
struct wprof_ran_ring {
	__u64 last;  /* the CPU's last switch: the current run began then; 0: none seen */
	__u32 head;  /* segs[head % WPROF_RAN_SEGS] is the newest segment */
	__u32 pad;
	struct wprof_ran_seg segs[WPROF_RAN_SEGS];
	/* the times last added on this CPU, not yet in `ran`: user space adds them */
	struct wprof_ran_pend pend[WPROF_RAN_PEND];
};

/*
 * --stats times the kinds of switch on one switch in WPROF_TIMED_EVERY (the
 * resume walks: every one), and adds each timed switch's ns that many times:
 * the NS_ counters estimate each kind's total, the TM_ ones count the timed.
 */
#define WPROF_TIMED_EVERY 64

/* Counters of everything the BPF side saw, did, or had to drop. */
enum wprof_stat {
	WPROF_STAT_SAMPLES,        /* on-CPU samples of targets */
	WPROF_STAT_SWITCHES,       /* switch-outs of targets */
	WPROF_STAT_WAKEUPS,        /* wakeups of targets */
	WPROF_STAT_USTACK_ERR,     /* bpf_get_stack(user) failed */
	WPROF_STAT_KSTACK_ERR,     /* bpf_get_stack(kernel) failed */
	WPROF_STAT_USTACK_TRUNC,   /* user stack deeper than the limit */
	WPROF_STAT_KSTACK_TRUNC,   /* kernel stack deeper than the limit */
	WPROF_STAT_STACKS_FULL,    /* stack map full: stack dropped */
	WPROF_STAT_COUNTS_FULL,    /* counts map full: data dropped */
	WPROF_STAT_THREADS_FULL,   /* thread map full: thread not tracked */
	WPROF_STAT_DROPPED_NS,     /* off-CPU ns lost to full maps */
	WPROF_STAT_FILTERED,       /* intervals outside --min-block/--max-block */
	WPROF_STAT_WAKES_FULL,     /* waker map full: waker not recorded */
	WPROF_STAT_USTACK_CUT,     /* user walks cut short; by reason: WPROF_STAT_CUT_BASE + cut */
	WPROF_STAT_CUT_BASE,
	WPROF_STAT_CUT_LAST = WPROF_STAT_CUT_BASE + WPROF_CUT_CNT - 1,
	WPROF_STAT_USTACK_NONE,    /* a user task with no user stack to walk (exiting, in exec) */
	WPROF_STAT_FP_FRAMES,      /* frames stepped by frame pointer (code without CFI) */
	WPROF_STAT_CFI_FRAMES,     /* frames stepped by CFI */
	WPROF_STAT_EVENTS_LOST,    /* exec/fork events the ring buffer had no room for */
	WPROF_STAT_UNTRACED_IN,    /* a thread got a CPU without a sched_switch event */
	WPROF_STAT_UNTRACED_OUT,   /* a thread left a CPU without a sched_switch event */
	/* switches by kind, and the BPF time each kind took (with --stats) */
	WPROF_STAT_SW_OTHER,       /* neither task a target */
	WPROF_STAT_SW_KTHREAD,     /* a target kernel thread left the CPU (no user stack) */
	WPROF_STAT_SW_WALKED,      /* user stack walked at switch-out */
	WPROF_STAT_SW_PREEMPT,     /* ... of them, preemptions (runnable) */
	WPROF_STAT_SW_DEFERRED,    /* user stack left to the thread's resume */
	WPROF_STAT_SW_RESUMED,     /* ... and walked there (the interval was walked) */
	WPROF_STAT_SW_IN,          /* a target got a CPU */
	WPROF_STAT_NS_OTHER,       /* BPF ns per kind (--stats only) */
	WPROF_STAT_NS_KTHREAD,
	WPROF_STAT_NS_WALKED,
	WPROF_STAT_NS_PREEMPT,
	WPROF_STAT_NS_DEFERRED,
	WPROF_STAT_NS_RESUMED,
	WPROF_STAT_NS_IN,
	WPROF_STAT_TM_OTHER,       /* switches timed per kind (--stats only): */
	WPROF_STAT_TM_KTHREAD,     /* what each kind's mean is taken over */
	WPROF_STAT_TM_WALKED,
	WPROF_STAT_TM_PREEMPT,
	WPROF_STAT_TM_DEFERRED,
	WPROF_STAT_TM_RESUMED,
	WPROF_STAT_TM_IN,
	/* closed off-CPU intervals by how their stacks were taken */
	WPROF_STAT_IV_EXACT,       /* at least the threshold long: walked */
	WPROF_STAT_IV_SAMPLED,     /* shorter, walked with probability length / threshold */
	WPROF_STAT_IV_SKIPPED,     /* shorter, not walked: their time weighs on the walked */
	WPROF_STAT_USER_LATE,      /* user stacks walked as the thread resumed (or window end) */
	WPROF_STAT_USER_LOST,      /* walked intervals whose user stack could not be walked */
	/*
	 * a CPU resumed another thread than the one it switched to, or a resume
	 * task work could not be scheduled or found the thread's user registers
	 * changed
	 */
	WPROF_STAT_RESUME_MISSED,
	WPROF_STAT_UNTRACED_RESUMED, /* a thread got a CPU without a sched_switch event: seen resuming */
	WPROF_STAT_CHECKED,        /* --check-deferred: user stacks walked at switch-out and resume */
	WPROF_STAT_CHECK_DIFFERED, /* ... where the two walks differ */
	WPROF_STAT_TARGETS_FULL,   /* `-- CMD`: forked processes not followed, targets map full */
	WPROF_STAT_MAPS_INHERIT_FAILED, /* forked processes that could not get the parent's maps */
	WPROF_STAT_REUSED_LOST,    /* ended threads whose entry a new one of the tid took over, */
				   /* and the reused_threads queue had no room for: totals lost */
	WPROF_STAT_TIMED_RQ,       /* switches timed by the run queue's clock __schedule() read */
	WPROF_STAT_TIMED_READ,     /* ... and by a clock read of wprof's */
	WPROF_STAT_SLOT_BUSY,      /* events of threads whose slot another CPU held too long */
	WPROF_STAT_WAKE_RQ_CLOCK,  /* waits for a CPU timed by the run queue's clock alone: */
				   /* their CPU had no calibration yet */
	/*
	 * Runs of wprof's programs the kernel skipped (a program already
	 * running on the CPU): filled by user space from the programs' info.
	 */
	WPROF_STAT_RUNS_MISSED,
	WPROF_STAT_HELD,           /* user stacks held (struct wprof_held sent) */
	/* ... not held (frame pointers only): no room in the ring buffer, or WPROF_HELD_PER_MAPS */
	WPROF_STAT_HELD_LOST,
	/* filled by user space: held stacks walked from the copy, to the first frame */
	WPROF_STAT_HELD_WALKED,
	/*
	 * ... and not walked from it (their maps were never read while the
	 * code was the same, or too late): frame pointers only, counted as
	 * cut (WPROF_CUT_NO_TABLE); held walks cut otherwise are counted by
	 * their reason
	 */
	WPROF_STAT_HELD_UNWALKED,
	WPROF_STAT_HELD_DROPPED,   /* ... of them, copies user space had no room or memory to keep */
	/* WPROF_HELD=check (user space): walks of a copy compared with the kernel's, */
	WPROF_STAT_HELD_CHECKED,
	WPROF_STAT_HELD_CHECK_DIFFERED, /* ... that differed */
	WPROF_STAT_LONG_BLOCKS,    /* long blocks (struct wprof_long_block) sent */
	WPROF_STAT_LONG_LOST,      /* ... not sent: no room in their ring buffer */
	/* filled by user space: long blocks let go for longer ones (LONG_BLOCKS_MAX) */
	WPROF_STAT_LONG_DROPPED,
	WPROF_STAT_RAN_FULL,       /* who ran instead: entries the `ran` map had no room for */
	WPROF_STAT_RAN_LOST_NS,    /* ... and the ns of wait they held */
	WPROF_STAT_PY_STACKS,      /* user stacks with Python frames */
	WPROF_STAT_PY_CUT,         /* ... whose Python frames were cut short (WPROF_FRAME_PY_CUT) */
	WPROF_STAT_PY_CODES_FULL,  /* code objects py_codes had no room for: their frames cut */
	WPROF_STAT_CNT,
};

/* Ring buffer events: a target process whose mappings user space should capture now. */
enum wprof_event_kind {
	WPROF_EV_EXEC = 0,
	WPROF_EV_FORK = 1,
	WPROF_EV_MAPS = 2, /* the unwinder met code it has no table for */
};

struct wprof_event {
	__u32 pid; /* tgid */
	__u32 kind; /* enum wprof_event_kind */
	/*
	 * WPROF_EV_FORK: the parent's tgid, the starts (as /proc/PID/stat's) of
	 * both, and the fork's time (bpf_ktime_get_ns())
	 */
	__u32 ppid;
	__u32 pad;
	__u64 start_ticks;
	__u64 parent_start_ticks;
	__u64 fork_ns;
};

/* Which tasks the programs look at. */
enum wprof_filter {
	WPROF_FILTER_ALL = 0, /* -a */
	WPROF_FILTER_PID = 1, /* -p / -- CMD: targets map keyed by tgid */
	WPROF_FILTER_TID = 2, /* -t: targets map keyed by tid */
};

#endif /* WPROF_H */
