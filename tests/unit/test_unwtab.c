// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind rows against an independent unwinder: this test walks its own
 * stack with the rows of its own executable and of libc, following the
 * rules as bpf/unwind.bpf.h does, and compares every return address with
 * what glibc's backtrace() finds (libgcc's .eh_frame unwinder). The chain
 * goes through code without frame pointers (this file is built with -O2,
 * which omits them, and libc's qsort() calling back into it), so a
 * frame-pointer walk would skip callers; the rows must not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "cfirows.h"
#include "wprof.h"

#define MAX_MODS 16
#define DEPTH 32

struct mod {
	__u64 lo, hi;   /* executable range */
	__u64 bias;     /* load bias (dlpi_addr) */
	__u64 base;     /* table base (ELF address) */
	struct wprof_unwind_row *rows;
	size_t nr;
};

static struct mod mods[MAX_MODS];
static int nr_mods;

static int add_mod(struct dl_phdr_info *info, size_t size, void *ctx)
{
	const char *path = info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
	struct mod *m = &mods[nr_mods];
	size_t cap = 0;
	Elf *elf;
	int fd;

	if (nr_mods == MAX_MODS || strstr(path, "linux-vdso"))
		return 0;
	m->lo = ~0ULL;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (info->dlpi_addr + ph->p_vaddr < m->lo)
			m->lo = info->dlpi_addr + ph->p_vaddr;
		m->hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		if (ph->p_vaddr < m->base || !m->base)
			m->base = ph->p_vaddr;
	}
	m->bias = info->dlpi_addr;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !cfirows__build(elf, &m->rows, &m->nr, &cap, &m->base))
		nr_mods++;
	else
		free(m->rows);
	if (elf)
		elf_end(elf);
	close(fd);
	return 0;
}

static const struct wprof_unwind_row *row_at(__u64 pc, const struct mod **mod)
{
	for (int i = 0; i < nr_mods; i++) {
		const struct mod *m = &mods[i];
		size_t lo = 0, hi = m->nr;
		__u64 rel;

		if (pc < m->lo || pc >= m->hi)
			continue;
		rel = pc - m->bias - m->base;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (m->rows[mid].pc <= rel)
				lo = mid + 1;
			else
				hi = mid;
		}
		*mod = m;
		return lo ? &m->rows[lo - 1] : NULL;
	}
	return NULL;
}

/* The walk of bpf/unwind.bpf.h over our own memory: return addresses, outermost last. */
static int walk(__u64 pc, __u64 sp, __u64 fp, __u64 *out, int max, int *kind_end)
{
	int n = 0;
	bool exact = true;

	*kind_end = -1;
	while (n < max) {
		const struct mod *m = NULL;
		const struct wprof_unwind_row *r = row_at(exact ? pc : pc - 1, &m);
		__u64 cfa, ra;

		if (!r) {
			*kind_end = -2;
			break;
		}
		if (r->kind == WPROF_CFA_SP)
			cfa = sp + r->cfa_off;
		else if (r->kind == WPROF_CFA_FP)
			cfa = fp + r->cfa_off;
		else if (r->kind == WPROF_CFA_NONE) {
			cfa = fp + 16;
			ra = ((__u64 *)fp)[1];
			fp = ((__u64 *)fp)[0];
			goto next;
		} else {
			*kind_end = r->kind;
			break;
		}
		ra = *(__u64 *)(cfa - 8);
		if (r->fp_off8 && r->fp_off8 != WPROF_FP_LOST)
			fp = *(__u64 *)(cfa + r->fp_off8 * 8);
next:
		if (!ra || cfa <= sp)
			break;
		out[n++] = ra;
		sp = cfa;
		pc = ra;
		exact = false;
	}
	return n;
}

static int check_depth;

static __attribute__((noinline)) int compare_here(const void *a, const void *b)
{
	void *bt[DEPTH];
	__u64 pc, sp, fp, ours[DEPTH];
	int nbt, n, end, same = 0, first;

	if (check_depth++)
		return *(const int *)a - *(const int *)b; /* once is enough */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(fp));
	n = walk(pc, sp, fp, ours, DEPTH, &end);
	nbt = backtrace(bt, DEPTH);
	/*
	 * backtrace()'s first frame is compare_here itself (an address in it),
	 * unless a sanitizer's interceptor of backtrace() comes first: start
	 * after the first frame in this executable.
	 */
	for (first = 0; first < nbt; first++) {
		Dl_info in_bt, in_us;

		if (dladdr(bt[first], &in_bt) && dladdr((void *)compare_here, &in_us) &&
		    in_bt.dli_fbase == in_us.dli_fbase)
			break;
	}
	first++;
	for (int i = 0; i + first < nbt && i < n; i++)
		same += ours[i] == (__u64)bt[i + first];
	CHECK(n >= 6, "the walk through qsort() found at least 6 callers (found %d)", n);
	CHECK_EQ_U64(same, nbt - first,
		     "every return address backtrace() finds, in order (%d of ours)", n);
	CHECK(end == WPROF_CFA_END, "the walk ended at a frame whose CFI says it is the first "
				   "(end %d)", end);
	return *(const int *)a - *(const int *)b;
}

static __attribute__((noinline)) void sort_some(int depth)
{
	int v[4] = { 3, 1, 2, 0 };

	if (depth > 0) {
		sort_some(depth - 1);
		__asm__ volatile("" ::: "memory"); /* no tail call */
		return;
	}
	qsort(v, 4, sizeof(v[0]), compare_here);
}

static void test_walk_matches_backtrace(void)
{
	void *bt[2];

	backtrace(bt, 2); /* loads libgcc_s before we list the modules */
	dl_iterate_phdr(add_mod, NULL);
	CHECK(nr_mods >= 2, "rows for the executable and libc (%d modules)", nr_mods);
	sort_some(5);
	CHECK(check_depth > 0, "the comparator ran");
}

static void test_rows_sorted(void)
{
	for (int i = 0; i < nr_mods; i++) {
		bool sorted = true, kinds = true;

		for (size_t k = 1; k < mods[i].nr; k++)
			sorted &= mods[i].rows[k - 1].pc < mods[i].rows[k].pc;
		for (size_t k = 0; k < mods[i].nr; k++)
			kinds &= mods[i].rows[k].kind <= WPROF_CFA_SYSCALL;
		CHECK(sorted, "module %d: rows strictly sorted by pc (%zu rows)", i, mods[i].nr);
		CHECK(kinds, "module %d: every row has a known kind", i);
	}
}

/* The file offset of section @name of @elf, and its size, or 0. */
static size_t section_at(Elf *elf, const char *name, size_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && elf_strptr(elf, shstrndx, sh.sh_name) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name)) {
			*size = sh.sh_size;
			return sh.sh_offset;
		}
	return 0;
}

/*
 * CFI that names a register numbered in the hundreds of millions (a hostile
 * file): libdw would take 2 GiB for the frame of each address it covers.
 * Our own executable, its CIE's first rules (def_cfa rsp+8; rip at cfa-8)
 * rewritten in place as DW_CFA_undefined of register 0x3f << 21: refused
 * before libdw runs it, at no cost.
 */
static void test_huge_register(void)
{
	static const unsigned char rules[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
	static const unsigned char huge[] = { 0x07, 0x80, 0x80, 0x80, 0x3f };
	struct wprof_unwind_row *rows = NULL;
	size_t off, size = 0, len, nr = 0, cap = 0, patched = 0;
	struct rusage before, after;
	unsigned char *img = NULL;
	__u64 base = 0;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), mfd = -1, ret;
	Elf *elf;

	if (!CHECK(fd >= 0, "our executable"))
		return;
	len = lseek(fd, 0, SEEK_END);
	img = malloc(len);
	if (!CHECK(img && pread(fd, img, len, 0) == (ssize_t)len, "read it"))
		goto out;
	elf = elf_memory((char *)img, len);
	off = elf ? section_at(elf, ".eh_frame", &size) : 0;
	if (elf)
		elf_end(elf);
	for (size_t i = off; off && i + sizeof(rules) <= off + size && i + sizeof(rules) <= len; i++)
		if (!memcmp(img + i, rules, sizeof(rules))) {
			memcpy(img + i, huge, sizeof(huge));
			patched++;
		}
	if (!CHECK(patched > 0, "its CIE patched (%zu)", patched))
		goto out;
	mfd = memfd_create("huge-register", MFD_CLOEXEC);
	if (!CHECK(mfd >= 0 && write(mfd, img, len) == (ssize_t)len, "a copy of it"))
		goto out;
	elf = elf_begin(mfd, ELF_C_READ_MMAP, NULL);
	getrusage(RUSAGE_SELF, &before);
	ret = elf ? cfirows__build(elf, &rows, &nr, &cap, &base) : -1;
	getrusage(RUSAGE_SELF, &after);
	CHECK(ret == -EBADMSG && nr == 0, "refused: no rows from it (%d, %zu rows)", ret, nr);
	CHECK(after.ru_maxrss - before.ru_maxrss < 64 * 1024, "no memory taken for it (%ld KiB)",
	      after.ru_maxrss - before.ru_maxrss);
	if (elf)
		elf_end(elf);
out:
	free(rows);
	free(img);
	if (mfd >= 0)
		close(mfd);
	close(fd);
}

/* One file's rows both ways: -1 when it is no ELF file, 0 the same, 1 different. */
static int same_rows(const char *path, size_t *nr_rows)
{
	struct wprof_unwind_row *a = NULL, *b = NULL;
	size_t na = 0, ca = 0, nb = 0, cb = 0;
	__u64 ba = ~0ULL, bb = ~0ULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ea, eb, ret = -1;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (elf && elf_kind(elf) == ELF_K_ELF) {
		ea = cfirows__build(elf, &a, &na, &ca, &ba);
		eb = cfirows__build_libdw(elf, &b, &nb, &cb, &bb);
		ret = ea != eb || na != nb || (!ea && ba != bb) ||
		      (na && memcmp(a, b, na * sizeof(*a)));
		*nr_rows += na;
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(a);
	free(b);
	return ret;
}

/*
 * .eh_frame read in one pass (ehrows.c) gives the very rows libdw gives
 * address range by address range: on this test, on libc, and on the shared
 * libraries and programs of this machine up to 8 MiB (libdw's way takes
 * long on larger ones), a few hundred files of every compiler and language.
 */
static void test_one_pass_matches_libdw(void)
{
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/bin", "/usr/sbin" };
	size_t files = 0, rows = 0, differ = 0;
	char first[512] = "";

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		while (dir && (de = readdir(dir)) && files < 400) {
			char path[512];
			struct stat st;
			int r;

			snprintf(path, sizeof(path), "%s/%s", dirs[d], de->d_name);
			if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > (8 << 20) ||
			    st.st_size < 1024 || !(strstr(de->d_name, ".so") || (st.st_mode & 0111)))
				continue;
			r = same_rows(path, &rows);
			if (r < 0)
				continue;
			files++;
			if (r && !differ++)
				snprintf(first, sizeof(first), "%s", path);
		}
		if (dir)
			closedir(dir);
	}
	CHECK(same_rows("/proc/self/exe", &rows) == 0, "this test's own rows the same");
	CHECK(files >= 50, "%zu files of this machine compared (%zu rows)", files, rows);
	CHECK(!differ, "the same rows both ways in every one (%zu differ, first %s)", differ, first);
}

int main(void)
{
	elf_version(EV_CURRENT);
	test_walk_matches_backtrace();
	test_rows_sorted();
	test_huge_register();
	test_one_pass_matches_libdw();
	return unit_done();
}
