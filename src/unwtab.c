// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind tables of the targets' code (see unwtab.h): each executable
 * file's rows (cfirows.c), built once, and per process which file is
 * mapped where.
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
#include "proclive.h"
#include "procmaps.h"
#include "unwtab.h"
#include "util.h"
#include "zsects.h"

#define MAX_LOADS 8
#define PAGE_SIZE_BYTES 4096

/* One executable file (identified as /proc/PID/maps names it: device and inode). */
struct tab_file {
	__u64 dev, ino;
	bool vdso;
	int err;          /* 0, or why it has no rows */
	__u64 base;       /* ELF address of row pc 0 */
	__u32 page_first, page_nr; /* the page index, right before the rows */
	__u32 row_first, row_nr;
	struct { __u64 off, vaddr, filesz; bool exec; } loads[MAX_LOADS]; /* PT_LOAD segments */
	int nr_loads;
};

struct tab_proc {
	__u32 pid;
	__u64 start_ticks;
	bool sent;
	struct wprof_proc_maps pm;
};

struct unwtab {
	struct tab_file *files;
	size_t nr_files;
	struct wprof_unwind_row *rows; /* every file's, in user memory */
	size_t nr_rows, cap_rows;
	struct tab_proc *procs;
	size_t nr_procs;
	/* bound kernel maps */
	struct wprof_unwind_row *krows;
	__u32 max_krows;
	size_t nr_krows; /* rows copied to krows */
	int procs_fd;
	struct unwtab_stats st;
};

struct unwtab *unwtab__new(void)
{
	struct unwtab *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->procs_fd = -1;
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
	free(u->files);
	free(u->rows);
	free(u->procs);
	free(u);
}

/* An encoded pointer of .eh_frame_hdr: only the encodings linkers use there. */

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
 * Mark the outermost functions of @elf's symbol table END in the rows
 * [first, *nr): each range [start, end) becomes one END row, followed at end
 * by the rule that held there before.
 */
static int mark_outermost(Elf *elf, struct unwtab *u, size_t first, __u64 base)
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
			for (k = first; k < u->nr_rows && u->rows[k].pc <= sym.st_value + sym.st_size - base;
			     k++)
				after = u->rows[k];
			after.pc = sym.st_value + sym.st_size - base;
			end.pc = sym.st_value - base;
			/* drop the rows inside, add the two */
			for (k = first; k < u->nr_rows;) {
				if (u->rows[k].pc >= end.pc && u->rows[k].pc <= after.pc)
					u->rows[k] = u->rows[--u->nr_rows];
				else
					k++;
			}
			if (cfirows__push(&u->rows, &u->nr_rows, &u->cap_rows, u->nr_rows, &end) ||
			    cfirows__push(&u->rows, &u->nr_rows, &u->cap_rows, u->nr_rows, &after))
				return -ENOMEM;
			qsort(&u->rows[first], u->nr_rows - first, sizeof(*u->rows), cmp_row);
		}
	}
	return 0;
}

/*
 * Put the page index of @f's rows before them (see struct wprof_exec_map):
 * entry p holds the index of the row in force at p << WPROF_PAGE_SHIFT.
 */
static int add_pages(struct unwtab *u, struct tab_file *f)
{
	__u32 np = (u->rows[f->row_first + f->row_nr - 1].pc >> WPROF_PAGE_SHIFT) + 1, k = 0;
	struct wprof_unwind_row *rows;

	while (u->nr_rows + np > u->cap_rows) {
		rows = realloc(u->rows, u->cap_rows * 2 * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		u->rows = rows;
		u->cap_rows *= 2;
	}
	rows = &u->rows[f->row_first];
	memmove(rows + np, rows, f->row_nr * sizeof(*rows));
	f->page_first = f->row_first;
	f->page_nr = np;
	f->row_first += np;
	u->nr_rows += np;
	for (__u32 p = 0; p < np; p++) {
		__u64 at = (__u64)p << WPROF_PAGE_SHIFT;

		while (k < f->row_nr && rows[np + k].pc <= at)
			k++;
		rows[p] = (struct wprof_unwind_row){ .pc = k ? f->row_first + k - 1 : WPROF_NO_ROW };
	}
	return 0;
}

static void build_file(struct unwtab *u, struct tab_file *f, Elf *elf)
{
	struct timespec t0, t1;
	size_t before = u->nr_rows;
	int guard;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	read_loads(elf, f);
	f->base = ~0ULL;
	for (int i = 0; i < f->nr_loads; i++)
		if (f->loads[i].vaddr < f->base)
			f->base = f->loads[i].vaddr;
	/* libdw's DWARF reader would inflate every compressed section: only .debug_frame is read */
	guard = zsects__guard(elf, ZSECTS_CFI);
	u->st.files_inflate_refused += guard > 0; /* walked by .eh_frame alone */
	f->err = guard < 0 ? -ENOENT :
			     cfirows__build(elf, &u->rows, &u->nr_rows, &u->cap_rows, &f->base);
	if (f->err == -EBADMSG) { /* refused: counted, and walked as code without CFI */
		u->st.files_cfi_refused++;
		f->err = -ENOENT;
	}
	/* without .eh_frame, frame-pointer steps, but Go's stacks still end */
	if (f->err == -ENOENT && f->nr_loads)
		f->err = 0;
	if (!f->err)
		f->err = mark_outermost(elf, u, before, f->base);
	if (!f->err && u->nr_rows == before) {
		/* no rows at all: one NONE row keeps the map entry meaningful */
		struct wprof_unwind_row none = { .pc = 0, .kind = WPROF_CFA_NONE };

		f->err = cfirows__push(&u->rows, &u->nr_rows, &u->cap_rows, before, &none);
	}
	f->row_first = before;
	f->row_nr = f->err ? 0 : u->nr_rows - before;
	if (f->row_nr && add_pages(u, f)) {
		u->nr_rows = before;
		f->row_nr = 0;
		f->err = -ENOMEM;
	}
	if (f->err)
		u->st.files_no_cfi++;
	else
		u->st.files++;
	u->st.rows = u->nr_rows;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	u->st.build_ns += (t1.tv_sec - t0.tv_sec) * NSEC_PER_SEC + t1.tv_nsec - t0.tv_nsec;
}

/* Copy new rows to the kernel, if they fit; a file that does not fit has none. */
static void send_rows(struct unwtab *u, struct tab_file *f)
{
	__u32 end = f->row_first + f->row_nr;

	if (!u->krows || !f->row_nr || end <= u->nr_krows)
		return;
	if (end > u->max_krows) {
		f->row_nr = 0;
		f->err = -ENOSPC;
		u->st.files_no_room++;
		return;
	}
	memcpy(&u->krows[f->page_first], &u->rows[f->page_first],
	       (end - f->page_first) * sizeof(*u->rows));
	u->nr_krows = end;
}

/* The file mapped at @m in @pid, its rows built the first time it is seen. */
static struct tab_file *file_of(struct unwtab *u, int pid, const struct proc_map *m)
{
	__u64 dev = (__u64)m->dev_major << 32 | m->dev_minor;
	bool vdso = m->path && !strcmp(m->path, "[vdso]");
	struct tab_file *f;
	Elf *elf = NULL;
	void *image = NULL;
	size_t len = 0;
	int fd = -1;

	for (size_t i = 0; i < u->nr_files; i++) {
		f = &u->files[i];
		if (vdso ? f->vdso : (!f->vdso && f->dev == dev && f->ino == m->inode))
			return f;
	}
	f = realloc(u->files, (u->nr_files + 1) * sizeof(*f));
	if (!f)
		return NULL;
	u->files = f;
	f = &u->files[u->nr_files++];
	memset(f, 0, sizeof(*f));
	f->dev = dev;
	f->ino = m->inode;
	f->vdso = vdso;
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
	else
		u->st.files_no_cfi++;
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
	struct tab_proc *p;

	for (size_t i = 0; i < u->nr_procs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	p = realloc(u->procs, (u->nr_procs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	u->procs = p;
	p = &u->procs[u->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static int send_proc(struct unwtab *u, struct tab_proc *p)
{
	if (u->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(u->procs_fd, &p->pid, &p->pm, BPF_ANY)) {
		u->st.procs_failed++;
		return -errno;
	}
	p->sent = true;
	u->st.procs++;
	return 0;
}

/* What the kernel counts in mm->exec_vm: executable, not writable, not the stack. */
static bool counts_as_exec(const struct proc_map *m)
{
	return m->perms[2] == 'x' && m->perms[1] != 'w' &&
	       !(m->path && !strcmp(m->path, "[vsyscall]"));
}

void unwtab__gone(struct unwtab *u, int pid)
{
	/*
	 * Gone before we could read it: the entry the BPF side made at its
	 * fork (a copy of its parent's) is nobody's now. Left there, the
	 * entries of short-lived processes would fill the map under churn.
	 */
	if (u && u->procs_fd >= 0)
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

	if (!p)
		return -ENOMEM;
	memset(&p->pm, 0, sizeof(p->pm));
	p->start_ticks = p->pm.start_ticks = ticks;
	for (size_t i = 0, skipped = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];
		struct wprof_exec_map *e = &p->pm.maps[p->pm.nr];
		struct tab_file *f = NULL;
		__u64 vaddr;

		if (m->perms[2] != 'x' || (m->path && !strcmp(m->path, "[vsyscall]")))
			continue;
		/* writable code (JIT) is listed, for frame-pointer steps, but not counted */
		if (counts_as_exec(m))
			p->pm.exec_vm += (m->end - m->start) / PAGE_SIZE_BYTES;
		if (p->pm.nr == WPROF_MAX_EXEC_MAPS) {
			u->st.maps_truncated += !skipped++;
			continue;
		}
		e->start = m->start;
		e->end = m->end;
		if (m->path && (m->path[0] != '[' || !strcmp(m->path, "[vdso]")))
			f = file_of(u, pid, m);
		if (f && !f->err) {
			send_rows(u, f);
			if (f->row_nr && map_vaddr(f, m, &vaddr)) {
				e->base = m->start - vaddr + f->base;
				e->row_first = f->row_first;
				e->row_nr = f->row_nr;
				e->page_first = f->page_first;
				e->page_nr = f->page_nr;
			}
		}
		p->pm.nr++;
	}
	return send_proc(u, p);
}

void unwtab__prune(struct unwtab *u, struct proclive *live)
{
	for (size_t i = 0; i < u->nr_procs;) {
		struct tab_proc *p = &u->procs[i];

		if (proclive__alive(live, p->pid, p->start_ticks)) {
			i++;
			continue;
		}
		if (u->procs_fd >= 0)
			bpf_map_delete_elem(u->procs_fd, &p->pid);
		/* the last takes its place: an entry is kilobytes, and most live on */
		*p = u->procs[--u->nr_procs];
	}
}

size_t unwtab__nr_rows(const struct unwtab *u)
{
	return u->nr_rows;
}

int unwtab__bind(struct unwtab *u, struct wprof_unwind_row *rows, __u32 max_rows, int procs_fd)
{
	int err = 0;

	u->krows = rows;
	u->max_krows = max_rows;
	u->procs_fd = procs_fd;
	for (size_t i = 0; i < u->nr_files; i++)
		send_rows(u, &u->files[i]);
	for (size_t i = 0; i < u->nr_procs; i++) {
		struct tab_proc *p = &u->procs[i];

		/* rows that did not fit: frame-pointer steps in that code */
		for (__u32 k = 0; k < p->pm.nr; k++) {
			struct wprof_exec_map *e = &p->pm.maps[k];

			if (e->row_nr && e->row_first + e->row_nr > max_rows)
				e->row_nr = 0;
		}
		if (!err)
			err = send_proc(u, p);
	}
	return err;
}

void unwtab__stats(const struct unwtab *u, struct unwtab_stats *st)
{
	*st = u->st;
}
