// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind tables of the targets' code (see unwtab.h): each executable
 * file's rows (cfirows.c), built once and kept, and per process which file
 * is mapped where.
 *
 * The kernel's row array has a fixed size, and a build or a long -a passes
 * far more code through it than it holds at once. So a file's rows are in
 * it only while it is worth it: a file is counted in use by each mapping of
 * a live process that names it; one that no live process maps keeps its
 * place until room is short (the next exec of cc1 finds it there), then
 * gives it back, least recently used first, and a quarter of the array is
 * kept free that way. Its rows stay in user memory (up to
 * IMAGE_BUDGET_ROWS for files no process maps), so that the next process
 * that maps it costs a copy, not a build.
 *
 * Giving back is made safe for walks that run meanwhile in three steps:
 * - the rows' header row (see struct wprof_exec_map) is overwritten first:
 *   a walk that starts later finds its map entry's tag no longer matches
 *   and does not use the rows (maps the BPF side copied at a fork, which
 *   user space never saw, may still point there);
 * - the range is held (rowalloc.h) until a drain has passed (its update of
 *   a map of maps returns only once every BPF program running has ended:
 *   synchronize_rcu()) and a second with it (the task work that walks at a
 *   thread's resume runs as the thread leaves the kernel, and walks take
 *   microseconds; the sleepable iterators that walk other tasks run only
 *   from this thread, at the start and the end, never during a drain
 *   cycle), so that no walk that read the old header is still reading;
 * - only then are other rows written there, the new header (a new tag) last.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "cfirows.h"
#include "hmap.h"
#include "proclive.h"
#include "procmaps.h"
#include "rowalloc.h"
#include "unwtab.h"
#include "util.h"
#include "zsects.h"

#define MAX_LOADS 8
#define PAGE_SIZE_BYTES 4096
#define NO_FILE 0xffffffffU
/* rows kept in user memory for files no live process maps: 64 MiB */
#define IMAGE_BUDGET_ROWS (8U << 20)
/* how long a process's maps wait for room being given back before files go without */
#define ROOM_WAIT_NS (3 * NSEC_PER_SEC)
/* files named on stderr when they find no room */
#define NO_ROOM_NAMED 10
/*
 * Room kept free or on its way (held) at each grace point, by giving back
 * that of files no live process maps: room given back is usable only a
 * second or two later, while copying a file's kept rows back costs little.
 */
#define ROOM_RESERVE(u) ((u)->max_krows / 2)

/* One executable file (identified as /proc/PID/maps names it: device and inode). */
struct tab_file {
	__u64 dev, ino;
	bool vdso;
	bool no_room;     /* counted in files_no_room */
	int err;          /* 0, or why it has no rows */
	char *path;       /* as first mapped, for messages */
	__u64 base;       /* ELF address of row pc 0 */
	/*
	 * Its page index (page_nr entries: the index of the row in force,
	 * counted from the first row, or WPROF_NO_ROW), then its row_nr rows.
	 * NULL while not built, or dropped to the budget (built again when
	 * needed: row_nr says it had rows).
	 */
	struct wprof_unwind_row *img;
	__u32 page_nr, row_nr;
	__u32 kfirst;     /* its header row in the kernel's array, or WPROF_NO_ROW */
	__u32 tag;        /* the header's tag there */
	__u32 users;      /* mappings of known live processes that name it */
	__u64 idle_ns;    /* when users last fell to 0 */
	struct { __u64 off, vaddr, filesz; bool exec; } loads[MAX_LOADS]; /* PT_LOAD segments */
	int nr_loads;
};

struct tab_proc {
	__u32 pid;
	__u32 idx;           /* in unwtab.procs */
	__u64 start_ticks;
	__u64 wait_ns;       /* when its maps first waited for room; 0: not waiting */
	__u64 read_ns;       /* when those maps were read */
	__u32 files[WPROF_MAX_EXEC_MAPS]; /* the file of each of pm.maps, or NO_FILE */
	struct wprof_proc_maps pm;
};

struct unwtab {
	struct tab_file **files;
	size_t nr_files, cap_files;
	struct hmap file_ids;  /* (dev, inode) -> file index + 1 */
	struct tab_proc **procs;
	size_t nr_procs, cap_procs;
	struct hmap proc_ids;  /* pid -> its tab_proc */
	__u64 live_rows;       /* rows (with index and header) of files in use */
	__u64 idle_img_rows;   /* rows kept in user memory of files no live process maps */
	__u32 next_tag;
	size_t nr_waiting;     /* processes whose maps wait for room */
	/* bound kernel maps */
	struct wprof_unwind_row *krows;
	struct rowalloc *alloc;
	__u32 max_krows;
	int procs_fd;
	struct unwtab_stats st;
};

/* Rows a file takes in the kernel: its header, page index and rows. */
static __u32 kernel_rows(const struct tab_file *f)
{
	return 1 + f->page_nr + f->row_nr;
}

struct unwtab *unwtab__new(void)
{
	struct unwtab *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->procs_fd = -1;
	u->next_tag = 1;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(u);
		errno = EINVAL;
		return NULL;
	}
	return u;
}

void unwtab__free(struct unwtab *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_files; i++) {
		free(u->files[i]->img);
		free(u->files[i]->path);
		free(u->files[i]);
	}
	for (size_t i = 0; i < u->nr_procs; i++)
		free(u->procs[i]);
	free(u->files);
	free(u->procs);
	hmap__clear(&u->file_ids);
	hmap__clear(&u->proc_ids);
	rowalloc__free(u->alloc);
	free(u);
}

/* A growing array of rows. */
struct row_buf {
	struct wprof_unwind_row *rows;
	size_t nr, cap;
};

static void read_loads(Elf *elf, struct tab_file *f)
{
	size_t nphdr;

	if (elf_getphdrnum(elf, &nphdr))
		return;
	for (size_t i = 0; i < nphdr && f->nr_loads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nr_loads].off = ph.p_offset;
		f->loads[f->nr_loads].vaddr = ph.p_vaddr;
		f->loads[f->nr_loads].filesz = ph.p_filesz;
		f->loads[f->nr_loads].exec = ph.p_flags & PF_X;
		f->nr_loads++;
	}
}

/*
 * Where a thread's stack begins in code that has no CFI to say so: Go's
 * runtime (frame pointers, no .eh_frame) starts goroutines under goexit and
 * system stacks under mstart (and mcall, morestack, which switch to them).
 * Walks stop there, complete, instead of reading on past the stack's start.
 */
static const char *const outermost_syms[] = {
	"runtime.goexit", "runtime.mstart", "runtime.mcall", "runtime.morestack",
	"runtime.rt0_go",
};

static bool is_outermost(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(outermost_syms); i++) {
		size_t n = strlen(outermost_syms[i]);

		if (!strncmp(name, outermost_syms[i], n) &&
		    (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

static int cmp_row(const void *a, const void *b)
{
	const struct wprof_unwind_row *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/*
 * Mark the outermost functions of @elf's symbol table END in @b's rows:
 * each range [start, end) becomes one END row, followed at end by the rule
 * that held there before.
 */
static int mark_outermost(Elf *elf, struct row_buf *b, __u64 base)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			struct wprof_unwind_row end = { .kind = WPROF_CFA_END }, after;
			const char *name;
			GElf_Sym sym;
			size_t k;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || sym.st_value < base ||
			    sym.st_value + sym.st_size - base > 0xffffffffULL)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !is_outermost(name))
				continue;
			/* the rule in force at the function's end goes on after it */
			after = (struct wprof_unwind_row){ .kind = WPROF_CFA_NONE };
			for (k = 0; k < b->nr && b->rows[k].pc <= sym.st_value + sym.st_size - base; k++)
				after = b->rows[k];
			after.pc = sym.st_value + sym.st_size - base;
			end.pc = sym.st_value - base;
			/* drop the rows inside, add the two */
			for (k = 0; k < b->nr;) {
				if (b->rows[k].pc >= end.pc && b->rows[k].pc <= after.pc)
					b->rows[k] = b->rows[--b->nr];
				else
					k++;
			}
			if (cfirows__push(&b->rows, &b->nr, &b->cap, b->nr, &end) ||
			    cfirows__push(&b->rows, &b->nr, &b->cap, b->nr, &after))
				return -ENOMEM;
			qsort(b->rows, b->nr, sizeof(*b->rows), cmp_row);
		}
	}
	return 0;
}

/*
 * Mark @elf's entry point WPROF_CFA_ENTRY in @b's rows (a file with CFI)
 * where no CFI covers it: up to the next row.
 */
static int mark_entry(Elf *elf, struct row_buf *b, __u64 base)
{
	struct wprof_unwind_row entry = { .kind = WPROF_CFA_ENTRY };
	size_t k, in = b->nr; /* the row in force at the entry; b->nr: none */
	GElf_Ehdr eh;

	if (!b->nr || !gelf_getehdr(elf, &eh) || !eh.e_entry || eh.e_entry < base ||
	    eh.e_entry - base > 0xffffffffULL)
		return 0;
	entry.pc = eh.e_entry - base;
	for (k = 0; k < b->nr; k++)
		if (b->rows[k].pc <= entry.pc && (in == b->nr || b->rows[k].pc >= b->rows[in].pc))
			in = k;
	if (in < b->nr && b->rows[in].kind != WPROF_CFA_NONE)
		return 0; /* CFI covers it */
	if (in < b->nr && b->rows[in].pc == entry.pc) {
		b->rows[in].kind = WPROF_CFA_ENTRY;
		return 0;
	}
	if (cfirows__push(&b->rows, &b->nr, &b->cap, b->nr, &entry))
		return -ENOMEM;
	qsort(b->rows, b->nr, sizeof(*b->rows), cmp_row);
	return 0;
}

/*
 * @f's image from @b's rows: the page index (see struct wprof_exec_map),
 * entry p the index of the row in force at p << WPROF_PAGE_SHIFT counted
 * from the first row (the kernel's copy adds where its rows start), then
 * the rows.
 */
static int make_image(struct tab_file *f, const struct row_buf *b)
{
	__u32 np = (b->rows[b->nr - 1].pc >> WPROF_PAGE_SHIFT) + 1, k = 0;
	struct wprof_unwind_row *img = malloc(((size_t)np + b->nr) * sizeof(*img));

	if (!img)
		return -ENOMEM;
	for (__u32 p = 0; p < np; p++) {
		__u64 at = (__u64)p << WPROF_PAGE_SHIFT;

		while (k < b->nr && b->rows[k].pc <= at)
			k++;
		img[p] = (struct wprof_unwind_row){ .pc = k ? k - 1 : WPROF_NO_ROW };
	}
	memcpy(img + np, b->rows, b->nr * sizeof(*img));
	f->img = img;
	f->page_nr = np;
	f->row_nr = b->nr;
	return 0;
}

static void build_file(struct unwtab *u, struct tab_file *f, Elf *elf)
{
	struct row_buf b = {};
	bool again = f->row_nr; /* built before, dropped to the budget */
	__u64 t0 = now_ns();
	int guard;

	f->nr_loads = 0;
	read_loads(elf, f);
	f->base = ~0ULL;
	for (int i = 0; i < f->nr_loads; i++)
		if (f->loads[i].vaddr < f->base)
			f->base = f->loads[i].vaddr;
	/* libdw's DWARF reader would inflate every compressed section: only .debug_frame is read */
	guard = zsects__guard(elf, ZSECTS_CFI);
	u->st.files_inflate_refused += guard > 0 && !again; /* walked by .eh_frame alone */
	f->err = guard < 0 ? -ENOENT : cfirows__build(elf, &b.rows, &b.nr, &b.cap, &f->base);
	if (f->err == -EBADMSG) { /* refused: counted, and walked as code without CFI */
		u->st.files_cfi_refused += !again;
		f->err = -ENOENT;
	}
	/* without .eh_frame, frame-pointer steps, but Go's stacks still end */
	if (f->err == -ENOENT && f->nr_loads)
		f->err = 0;
	if (!f->err)
		f->err = mark_outermost(elf, &b, f->base);
	if (!f->err)
		f->err = mark_entry(elf, &b, f->base);
	if (!f->err && !b.nr) {
		/* no rows at all: one NONE row keeps the map entry meaningful */
		struct wprof_unwind_row none = { .pc = 0, .kind = WPROF_CFA_NONE };

		f->err = cfirows__push(&b.rows, &b.nr, &b.cap, 0, &none);
	}
	if (!f->err)
		f->err = make_image(f, &b);
	free(b.rows);
	if (f->err)
		f->row_nr = f->page_nr = 0;
	if (again) {
		u->st.files_rebuilt++;
	} else {
		if (f->err)
			u->st.files_no_cfi++;
		else
			u->st.files++;
		u->st.rows += f->row_nr;
	}
	if (f->img && !f->users)
		u->idle_img_rows += f->page_nr + f->row_nr;
	u->st.build_ns += now_ns() - t0;
}

/* A 64-bit store the BPF side sees whole, after every store before it. */
static void set_header(struct wprof_unwind_row *row, __u32 tag)
{
	struct wprof_unwind_row h = { .pc = tag, .kind = tag ? WPROF_ROW_HEADER : 0 };
	__u64 v;

	memcpy(&v, &h, sizeof(v));
	__atomic_store_n((__u64 *)row, v, __ATOMIC_RELEASE);
}

/* Give back @f's kernel room (see the top of this file). */
static void unplace(struct unwtab *u, struct tab_file *f, __u64 now)
{
	if (f->kfirst == WPROF_NO_ROW)
		return;
	set_header(&u->krows[f->kfirst], 0);
	if (rowalloc__put(u->alloc, f->kfirst, kernel_rows(f), now))
		pr_err("unwind rows %u-%u given back twice (a bug): left unused", f->kfirst,
		       f->kfirst + kernel_rows(f));
	f->kfirst = WPROF_NO_ROW;
	f->tag = 0;
	u->st.files_given_back++;
}

static int cmp_idle(const void *a, const void *b)
{
	const struct tab_file *x = *(struct tab_file *const *)a, *y = *(struct tab_file *const *)b;

	return x->idle_ns < y->idle_ns ? -1 : x->idle_ns > y->idle_ns;
}

/*
 * Give back the room of files no live process maps, least recently used
 * first, until @want rows are free or on their way (held). True when any
 * are held now: room is coming.
 */
static bool make_room(struct unwtab *u, __u64 want, __u64 now)
{
	struct rowalloc_stats st;
	struct tab_file **idle;
	size_t n = 0;

	rowalloc__stats(u->alloc, &st);
	if (st.free + st.quarantined < want) {
		idle = malloc(u->nr_files * sizeof(*idle));
		for (size_t i = 0; idle && i < u->nr_files; i++)
			if (!u->files[i]->users && u->files[i]->kfirst != WPROF_NO_ROW)
				idle[n++] = u->files[i];
		if (idle)
			qsort(idle, n, sizeof(*idle), cmp_idle);
		for (size_t i = 0; i < n && st.free + st.quarantined < want; i++) {
			st.quarantined += kernel_rows(idle[i]);
			unplace(u, idle[i], now);
		}
		free(idle);
		rowalloc__stats(u->alloc, &st);
	}
	return st.quarantined > 0;
}

/*
 * Copy @f's rows into the kernel's array. 0; -EAGAIN when room is being
 * given back (held for a while, see rowalloc.h); -ENOSPC when there is
 * none to give.
 */
static int place(struct unwtab *u, struct tab_file *f, __u64 now)
{
	struct wprof_unwind_row *k;
	__u32 first, rows_at;
	int err;

	if (f->kfirst != WPROF_NO_ROW)
		return 0;
	if (!f->img || kernel_rows(f) > u->max_krows)
		return -ENOSPC;
	err = rowalloc__get(u->alloc, kernel_rows(f), now, &first);
	if (err == -ENOSPC)
		return make_room(u, kernel_rows(f) + ROOM_RESERVE(u), now) ? -EAGAIN : -ENOSPC;
	if (err)
		return err;
	/* the rows, the page index made absolute, then the header that makes them valid */
	k = &u->krows[first];
	rows_at = first + 1 + f->page_nr;
	memcpy(k + 1 + f->page_nr, f->img + f->page_nr, f->row_nr * sizeof(*k));
	for (__u32 p = 0; p < f->page_nr; p++)
		k[1 + p] = (struct wprof_unwind_row){
			.pc = f->img[p].pc == WPROF_NO_ROW ? WPROF_NO_ROW : rows_at + f->img[p].pc,
		};
	/*
	 * 32 bits: at one placement a millisecond they come round after 49
	 * days, and a stale map entry would then also have to name this very
	 * row as its header to be taken for the new rows'.
	 */
	f->tag = u->next_tag++;
	if (!u->next_tag) /* 0 is no tag */
		u->next_tag = 1;
	set_header(k, f->tag);
	f->kfirst = first;
	return 0;
}

/* The file is in use by one more mapping, or one fewer. */
static void file_get(struct unwtab *u, struct tab_file *f)
{
	if (!f->users++) {
		u->live_rows += kernel_rows(f);
		if (f->img)
			u->idle_img_rows -= f->page_nr + f->row_nr;
		if (u->live_rows > u->st.rows_live_peak)
			u->st.rows_live_peak = u->live_rows;
	}
}

static void file_put(struct unwtab *u, struct tab_file *f, __u64 now)
{
	if (--f->users)
		return;
	u->live_rows -= kernel_rows(f);
	if (f->img)
		u->idle_img_rows += f->page_nr + f->row_nr;
	f->idle_ns = now;
}

/* Drop the user-memory rows of files no process maps, oldest first, down to the budget. */
static void trim_images(struct unwtab *u)
{
	struct tab_file **idle;
	size_t n = 0;

	if (u->idle_img_rows <= IMAGE_BUDGET_ROWS)
		return;
	idle = malloc(u->nr_files * sizeof(*idle));
	if (!idle)
		return;
	for (size_t i = 0; i < u->nr_files; i++)
		if (!u->files[i]->users && u->files[i]->img)
			idle[n++] = u->files[i];
	qsort(idle, n, sizeof(*idle), cmp_idle);
	for (size_t i = 0; i < n && u->idle_img_rows > IMAGE_BUDGET_ROWS; i++) {
		/* its kernel copy, if any, stays until room is wanted */
		u->idle_img_rows -= idle[i]->page_nr + idle[i]->row_nr;
		free(idle[i]->img);
		idle[i]->img = NULL;
		u->st.images_dropped++;
	}
	free(idle);
}

/*
 * The file mapped at @m in @pid (its index in *@idx), its rows built the
 * first time it is seen, and again if they were dropped meanwhile.
 */
static struct tab_file *file_of(struct unwtab *u, int pid, const struct proc_map *m, __u32 *idx)
{
	bool vdso = m->path && !strcmp(m->path, "[vdso]");
	/* the vDSO: one kernel image, whatever the maps say of it */
	__u64 dev = vdso ? ~0ULL : (__u64)m->dev_major << 32 | m->dev_minor;
	__u64 ino = vdso ? ~0ULL : m->inode;
	struct tab_file *f;
	Elf *elf = NULL;
	void *image = NULL, *old;
	size_t len = 0, at;
	int fd = -1;

	at = (size_t)(uintptr_t)hmap__get(&u->file_ids, dev, ino);
	if (at) {
		*idx = at - 1;
		f = u->files[at - 1];
		/* kept in the kernel, or with no rows to build: nothing to read */
		if (f->img || f->kfirst != WPROF_NO_ROW || !f->row_nr)
			return f;
	} else {
		f = calloc(1, sizeof(*f));
		if (!f || array_reserve(&u->files, &u->cap_files, u->nr_files, sizeof(*u->files), 64) ||
		    hmap__put(&u->file_ids, dev, ino, (void *)(uintptr_t)(u->nr_files + 1), &old)) {
			free(f);
			return NULL;
		}
		*idx = u->nr_files;
		u->files[u->nr_files++] = f;
		f->dev = dev;
		f->ino = ino;
		f->vdso = vdso;
		f->path = strdup(m->path ? m->path : "?");
		f->kfirst = WPROF_NO_ROW;
	}
	f->err = -ENOENT;
	if (vdso) {
		image = procmaps__copy_vdso(pid, m, &len);
		if (image)
			elf = elf_memory(image, len);
	} else {
		fd = procmaps__open_file(pid, m);
		if (fd >= 0)
			elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF)
		build_file(u, f, elf);
	else if (!f->row_nr)
		u->st.files_no_cfi++;
	else
		f->row_nr = f->page_nr = 0; /* it was there; not readable now */
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(image);
	return f;
}

/* The ELF address of @m's start: which PT_LOAD maps @m's file offset. */
static bool map_vaddr(const struct tab_file *f, const struct proc_map *m, __u64 *vaddr)
{
	/*
	 * The kernel maps a segment from its offset rounded down to a page, and
	 * that page may also hold the end of the segment before it (lld lays
	 * segments out so): only the executable segment is the code's.
	 */
	for (int i = 0; i < f->nr_loads; i++) {
		__u64 page_off = f->loads[i].off & ~(__u64)(PAGE_SIZE_BYTES - 1);

		if (f->loads[i].exec && m->pgoff >= page_off &&
		    m->pgoff < f->loads[i].off + f->loads[i].filesz) {
			*vaddr = (f->loads[i].vaddr & ~(__u64)(PAGE_SIZE_BYTES - 1)) +
				 (m->pgoff - page_off);
			return true;
		}
	}
	return false;
}

static struct tab_proc *proc_get(struct unwtab *u, __u32 pid)
{
	struct tab_proc *p = hmap__get(&u->proc_ids, pid, 0);
	void *old;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || array_reserve(&u->procs, &u->cap_procs, u->nr_procs, sizeof(*u->procs), 256) ||
	    hmap__put(&u->proc_ids, pid, 0, p, &old)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->idx = u->nr_procs;
	for (int i = 0; i < WPROF_MAX_EXEC_MAPS; i++)
		p->files[i] = NO_FILE;
	u->procs[u->nr_procs++] = p;
	return p;
}

/* @p's mappings no longer name their files. */
static void proc_release(struct unwtab *u, struct tab_proc *p, __u64 now)
{
	for (__u32 i = 0; i < WPROF_MAX_EXEC_MAPS; i++) {
		if (p->files[i] != NO_FILE)
			file_put(u, u->files[p->files[i]], now);
		p->files[i] = NO_FILE;
	}
}

/* Forget @p, and the kernel's entry for its pid. */
static void proc_drop(struct unwtab *u, struct tab_proc *p, __u64 now)
{
	if (u->procs_fd >= 0)
		bpf_map_delete_elem(u->procs_fd, &p->pid);
	u->nr_waiting -= !!p->wait_ns;
	proc_release(u, p, now);
	hmap__del(&u->proc_ids, p->pid, 0);
	u->procs[p->idx] = u->procs[--u->nr_procs];
	u->procs[p->idx]->idx = p->idx;
	free(p);
}

/* @f has no room: counted once, and the first few named. */
static void no_room(struct unwtab *u, struct tab_file *f)
{
	if (f->no_room)
		return;
	f->no_room = true;
	if (u->st.files_no_room++ < NO_ROOM_NAMED)
		pr_err("no room for the unwind table of %s (%u rows) beside the %llu rows of the code "
		       "live processes map, in the kernel's %u: its code is walked by frame pointers",
		       f->path, kernel_rows(f), (unsigned long long)(u->live_rows - kernel_rows(f)),
		       u->max_krows);
}

/*
 * Put the files of @p's mappings in the kernel and send its maps: 0;
 * -EAGAIN when room is being given back for them (not sent: the BPF side
 * asks again for them as it meets their code, and the walk uses frame
 * pointers until then); -errno when they could not be sent.
 */
static int send_proc(struct unwtab *u, struct tab_proc *p)
{
	__u64 now = now_ns();
	bool wait = false;

	for (__u32 i = 0; i < p->pm.nr; i++) {
		struct tab_file *f = p->files[i] == NO_FILE ? NULL : u->files[p->files[i]];
		struct wprof_exec_map *e = &p->pm.maps[i];
		int err = f ? place(u, f, now) : 0;

		if (err == -EAGAIN && (!p->wait_ns || now - p->wait_ns < ROOM_WAIT_NS))
			wait = true;
		else if (err)
			no_room(u, f);
		if (!f || f->kfirst == WPROF_NO_ROW) {
			e->page_first = e->page_nr = e->row_first = e->row_nr = e->tag = 0;
			continue;
		}
		e->page_first = f->kfirst + 1;
		e->page_nr = f->page_nr;
		e->row_first = f->kfirst + 1 + f->page_nr;
		e->row_nr = f->row_nr;
		e->tag = f->tag;
	}
	if (wait) {
		if (!p->wait_ns) {
			p->wait_ns = now;
			u->nr_waiting++;
			u->st.room_waits++;
		}
		return -EAGAIN;
	}
	u->nr_waiting -= !!p->wait_ns;
	p->wait_ns = 0;
	if (bpf_map_update_elem(u->procs_fd, &p->pid, &p->pm, BPF_ANY)) {
		u->st.procs_failed++;
		return -errno;
	}
	u->st.procs++;
	return 0;
}

void unwtab__gone(struct unwtab *u, int pid)
{
	struct tab_proc *p;

	if (!u)
		return;
	/*
	 * Gone before we could read it: the entry the BPF side made at its
	 * fork (a copy of its parent's) is nobody's now. Left there, the
	 * entries of short-lived processes would fill the map under churn.
	 */
	p = hmap__get(&u->proc_ids, pid, 0);
	if (p)
		proc_drop(u, p, now_ns());
	else if (u->procs_fd >= 0)
		bpf_map_delete_elem(u->procs_fd, &pid);
}

int unwtab__add_pid(struct unwtab *u, int pid)
{
	struct proc_maps maps = {};
	__u64 ticks;
	int err;

	err = procmaps__read_proc(pid, &ticks, &maps);
	if (err == -ESRCH)
		unwtab__gone(u, pid);
	if (err)
		return err;
	err = unwtab__add_maps(u, pid, ticks, &maps);
	procmaps__free(&maps);
	return err;
}

int unwtab__add_maps(struct unwtab *u, int pid, __u64 ticks, const struct proc_maps *maps)
{
	struct tab_proc *p = proc_get(u, pid);
	__u32 files[WPROF_MAX_EXEC_MAPS];
	struct wprof_proc_maps *pm;

	if (!p)
		return -ENOMEM;
	pm = &p->pm;
	/* the files of the new maps are taken before the old ones' are let go */
	memcpy(files, p->files, sizeof(files));
	memset(pm, 0, sizeof(*pm));
	p->start_ticks = pm->start_ticks = ticks;
	pm->start_stack = maps->start_stack;
	pm->exec_vm = procmaps__exec_pages(maps);
	p->read_ns = maps->read_ns;
	for (size_t i = 0, skipped = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];
		struct wprof_exec_map *e = &pm->maps[pm->nr];
		struct tab_file *f = NULL;
		__u32 idx = NO_FILE;
		__u64 vaddr;

		if (m->perms[2] != 'x' || (m->path && !strcmp(m->path, "[vsyscall]")))
			continue;
		/* writable code (JIT) is listed, for frame-pointer steps, but not counted */
		if (pm->nr == WPROF_MAX_EXEC_MAPS) {
			u->st.maps_truncated += !skipped++;
			continue;
		}
		e->start = m->start;
		e->end = m->end;
		p->files[pm->nr] = NO_FILE;
		if (m->path && (m->path[0] != '[' || !strcmp(m->path, "[vdso]")))
			f = file_of(u, pid, m, &idx);
		if (f && !f->err && f->row_nr && map_vaddr(f, m, &vaddr)) {
			e->base = m->start - vaddr + f->base;
			p->files[pm->nr] = idx;
			file_get(u, f);
		}
		pm->nr++;
	}
	for (__u32 i = pm->nr; i < WPROF_MAX_EXEC_MAPS; i++)
		p->files[i] = NO_FILE;
	for (__u32 i = 0; i < WPROF_MAX_EXEC_MAPS; i++)
		if (files[i] != NO_FILE)
			file_put(u, u->files[files[i]], now_ns());
	if (!u->krows)
		return 0; /* sent once bound */
	return send_proc(u, p);
}

void unwtab__prune(struct unwtab *u, struct proclive *live)
{
	__u64 now = now_ns();

	for (size_t i = 0; i < u->nr_procs;) {
		struct tab_proc *p = u->procs[i];

		if (proclive__alive(live, p->pid, p->start_ticks))
			i++;
		else
			proc_drop(u, p, now); /* the last takes its place */
	}
}

void unwtab__grace(struct unwtab *u)
{
	__u64 now = now_ns();

	if (u->alloc) {
		rowalloc__grace(u->alloc, now);
		/* a quarter kept free, so that new code seldom waits for room */
		make_room(u, ROOM_RESERVE(u), now);
	}
	trim_images(u);
}

size_t unwtab__waiting(const struct unwtab *u, __u32 *pids, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < u->nr_procs && n < max && n < u->nr_waiting; i++)
		if (u->procs[i]->wait_ns)
			pids[n++] = u->procs[i]->pid;
	return n;
}

const struct wprof_proc_maps *unwtab__maps(const struct unwtab *u, __u32 pid)
{
	const struct tab_proc *p = hmap__get(&u->proc_ids, pid, 0);

	return p && u->krows && !p->wait_ns ? &p->pm : NULL;
}

__u64 unwtab__read_ns(const struct unwtab *u, __u32 pid)
{
	const struct tab_proc *p = hmap__get(&u->proc_ids, pid, 0);

	return p ? p->read_ns : 0;
}

const struct wprof_unwind_row *unwtab__rows(const struct unwtab *u, __u32 *nr_rows)
{
	*nr_rows = u->krows ? u->max_krows : 0;
	return u->krows;
}

size_t unwtab__nr_rows(const struct unwtab *u)
{
	return u->live_rows;
}

int unwtab__bind(struct unwtab *u, struct wprof_unwind_row *rows, __u32 max_rows, int procs_fd)
{
	int err = 0;

	u->alloc = rowalloc__new(max_rows);
	if (!u->alloc)
		return -ENOMEM;
	u->krows = rows;
	u->max_krows = max_rows;
	u->procs_fd = procs_fd;
	for (size_t i = 0; i < u->nr_procs; i++) {
		/* nothing held yet: what does not fit now never will (-EAGAIN cannot come) */
		int e = send_proc(u, u->procs[i]);

		if (!err && e != -EAGAIN)
			err = e;
	}
	return err;
}

void unwtab__stats(const struct unwtab *u, struct unwtab_stats *st)
{
	*st = u->st;
	st->rows_capacity = u->max_krows;
}
