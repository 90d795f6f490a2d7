// SPDX-License-Identifier: GPL-2.0-only
/*
 * User and kernel symbolization.
 *
 * Three caches, all hash tables:
 *   files: (dev, inode) -> struct sym_file. One per ELF file whatever the
 *          number of processes mapping it. Opened at add_pid time (the fd
 *          keeps a deleted or unmounted file readable), indexed lazily on the
 *          first lookup, after which the fd is closed.
 *   procs: pid -> struct proc, a list of maps snapshots, newest first.
 *   names: (pid, ip) -> the resulting name, valid while the process's
 *          generation is unchanged.
 *
 * An address goes process address -> file offset (through the mapping) ->
 * ELF virtual address (through the PT_LOAD headers) -> symbol, which is
 * correct for PIE, non-PIE executables and shared libraries alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <elfutils/libdwfl.h>

#include "kallsyms.h"
#include "procmaps.h"
#include "symbolize.h"

/* Keys of the vDSO images in the files table: no real file has this device. */
#define VDSO_DEV (~0ULL)
#define VDSO_MAX_SIZE (1U << 20)
/* Symbols this far back are checked for one that contains an address (nested symbols). */
#define NESTED_LOOKBACK 8
#define FALLBACK_LEN 512
/*
 * Files are indexed lazily, but each one waiting holds an fd: past this many,
 * index at once (which closes the fd) to stay well within RLIMIT_NOFILE.
 */
#define MAX_HELD_FDS 256

struct hslot {
	__u64 k1, k2;
	void *val; /* NULL: empty */
};

struct hmap {
	struct hslot *slots;
	size_t cap; /* power of 2 */
	size_t nr;
};

struct seg {
	__u64 off, filesz, vaddr, memsz;
	bool exec;
};

struct fsym {
	__u64 start, end; /* module addresses, [start, end) */
	__u32 name;	  /* offset in sym_file.names */
};

struct sym_file {
	int fd;		  /* -1 once indexed, or if never opened */
	bool indexed;
	char *path;	  /* as the process saw it: libdw looks for debug files next to it */
	const char *base; /* basename of path, for "lib.so+0x..." */
	__u64 bias;	  /* module address - ELF vaddr */
	struct seg *segs; /* PT_LOAD headers */
	size_t nr_segs;
	struct fsym *syms; /* sorted by start, one per address */
	size_t nr_syms;
	char *names;
};

struct snapshot {
	struct snapshot *older;
	struct proc_maps maps;
	struct sym_file **files; /* parallel to maps.maps; NULL when not backed by an opened file */
};

struct proc {
	__u64 start_time; /* tells a reused pid from the process we captured */
	__u32 gen;	  /* changes whenever cached names of this pid may be stale */
	struct snapshot *snaps;
};

struct name_ent {
	__u32 gen;
	int ret;
	char name[];
};

struct symbolizer {
	struct hmap files, procs, names;
	__u32 gen;
	__u32 held_fds;
	struct kallsyms *ksyms;
	bool ksyms_tried;
	struct symbolizer_stats stats;
};

/*
 * Where libdw's standard callbacks look for separate debug files: by build-id
 * under /usr/lib/debug/.build-id, by .gnu_debuglink name next to the file, in
 * its .debug/ and under /usr/lib/debug/<its directory>.
 */
static char debuginfo_dirs[] = ":.debug:/usr/lib/debug";
static char *debuginfo_path = debuginfo_dirs;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static __u64 hash2(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ULL ^ b;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static struct hslot *hmap_slot(const struct hmap *h, __u64 k1, __u64 k2)
{
	size_t mask = h->cap - 1, i = hash2(k1, k2) & mask;

	while (h->slots[i].val && (h->slots[i].k1 != k1 || h->slots[i].k2 != k2))
		i = (i + 1) & mask;
	return &h->slots[i];
}

static void *hmap_get(const struct hmap *h, __u64 k1, __u64 k2)
{
	return h->cap ? hmap_slot(h, k1, k2)->val : NULL;
}

/* Insert or replace; the replaced value (or NULL) goes to *old. 0 or -ENOMEM. */
static int hmap_put(struct hmap *h, __u64 k1, __u64 k2, void *val, void **old)
{
	struct hslot *slot;

	if ((h->nr + 1) * 2 > h->cap) {
		struct hmap bigger = { .cap = h->cap ? h->cap * 2 : 64 };
		size_t i;

		bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (i = 0; i < h->cap; i++)
			if (h->slots[i].val)
				*hmap_slot(&bigger, h->slots[i].k1, h->slots[i].k2) = h->slots[i];
		bigger.nr = h->nr;
		free(h->slots);
		*h = bigger;
	}
	slot = hmap_slot(h, k1, k2);
	*old = slot->val;
	if (!slot->val)
		h->nr++;
	slot->k1 = k1;
	slot->k2 = k2;
	slot->val = val;
	return 0;
}

/* ---- per-file symbol index ---- */

struct tsym {
	__u64 start, size;
	const char *name;
	__u32 rank;
};

/*
 * Several names at one address (aliases such as nanosleep/__nanosleep):
 * prefer what a reader knows: non-local, fewer leading underscores, global
 * over weak, shorter.
 */
static __u32 sym_rank(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);
	__u32 underscores = 0, len = strnlen(name, 0xffff);

	while (name[underscores] == '_' && underscores < 15)
		underscores++;
	return (bind == STB_LOCAL) << 24 | underscores << 20 | (bind != STB_GLOBAL) << 19 | len;
}

static int tsym_cmp(const void *a, const void *b)
{
	const struct tsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int read_segments(struct sym_file *f, Elf *elf)
{
	size_t nr, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nr))
		return -EINVAL;
	f->segs = calloc(nr ? nr : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nr_segs++] = (struct seg){
			.off = ph.p_offset,
			.filesz = ph.p_filesz,
			.vaddr = ph.p_vaddr,
			.memsz = ph.p_memsz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

/* End of the loaded segment holding module address @addr: the limit of a sizeless symbol. */
static __u64 segment_end(const struct sym_file *f, __u64 addr)
{
	size_t i;

	for (i = 0; i < f->nr_segs; i++) {
		__u64 lo = f->segs[i].vaddr + f->bias;

		if (addr >= lo && addr - lo < f->segs[i].memsz)
			return lo + f->segs[i].memsz;
	}
	return addr + 1;
}

/* Copy libdw's function symbols into a sorted array with one entry per address. */
static int read_symbols(struct sym_file *f, Dwfl_Module *mod)
{
	struct tsym *t = NULL;
	size_t nr = 0, names_len = 0, i, j;
	int n = dwfl_module_getsymtab(mod), err = 0;

	if (n <= 0)
		return 0; /* no symbol table at all: every address falls back */
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 1; i < (size_t)n; i++) {
		const char *name;
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		int type;

		name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !name[0])
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == (GElf_Word)-1)
			continue;
		t[nr++] = (struct tsym){ addr, sym.st_size, name, sym_rank(&sym, name) };
	}
	qsort(t, nr, sizeof(*t), tsym_cmp);
	/* The best-ranked name of each address first; the biggest size of the group. */
	for (i = 0, j = 0; i < nr; i++) {
		if (j && t[j - 1].start == t[i].start) {
			if (t[i].size > t[j - 1].size)
				t[j - 1].size = t[i].size;
			continue;
		}
		t[j++] = t[i];
		names_len += strlen(t[i].name) + 1;
	}
	nr = j;
	f->syms = calloc(nr ? nr : 1, sizeof(*f->syms));
	f->names = malloc(names_len ? names_len : 1);
	if (!f->syms || !f->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0, names_len = 0; i < nr; i++) {
		struct fsym *fs = &f->syms[i];
		size_t len = strlen(t[i].name) + 1;

		fs->start = t[i].start;
		if (t[i].size)
			fs->end = t[i].start + t[i].size;
		else if (i + 1 < nr)
			fs->end = t[i + 1].start; /* assembly without .size: up to the next one */
		else
			fs->end = segment_end(f, t[i].start);
		fs->name = names_len;
		memcpy(f->names + names_len, t[i].name, len);
		names_len += len;
	}
	f->nr_syms = nr;
cleanup:
	free(t);
	return err;
}

/*
 * Read the file's PT_LOAD headers and function symbols. libdw picks the
 * symbol table: .symtab of the file or of its separate debug file (found by
 * build-id or .gnu_debuglink), else .dynsym plus the MiniDebugInfo symtab.
 * Failure just leaves the file without symbols: its frames fall back.
 */
static void sym_file__index(struct symbolizer *s, struct sym_file *f)
{
	Dwfl_Module *mod;
	GElf_Addr bias;
	Dwfl *dwfl;
	Elf *elf;

	f->indexed = true;
	if (f->fd < 0)
		return;
	s->held_fds--;
	dwfl = dwfl_begin(&dwfl_callbacks);
	if (!dwfl)
		goto cleanup;
	/* Reported at 0: module addresses are the ELF's own virtual addresses. */
	mod = dwfl_report_elf(dwfl, f->base, f->path, f->fd, 0, true);
	if (mod)
		f->fd = -1; /* consumed by libdw, closed by dwfl_end() */
	if (dwfl_report_end(dwfl, NULL, NULL) || !mod)
		goto cleanup;
	elf = dwfl_module_getelf(mod, &bias);
	f->bias = bias;
	if (!elf || read_segments(f, elf))
		goto cleanup;
	read_symbols(f, mod);
cleanup:
	dwfl_end(dwfl);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* The symbol of the file that contains @file_off, or NULL. */
static const char *sym_file__find(struct symbolizer *s, struct sym_file *f, __u64 file_off,
				  bool exec)
{
	const struct seg *seg = NULL;
	size_t i, lo = 0, hi;
	__u64 addr;

	if (!f->indexed)
		sym_file__index(s, f);
	/* Segments may share a file page; an executable mapping wants the executable one. */
	for (i = 0; i < f->nr_segs; i++) {
		const struct seg *sg = &f->segs[i];

		if (file_off < sg->off || file_off - sg->off >= sg->filesz)
			continue;
		if (!seg || (sg->exec == exec && seg->exec != exec))
			seg = sg;
	}
	if (!seg)
		return NULL;
	addr = file_off - seg->off + seg->vaddr + f->bias;

	hi = f->nr_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > 0 && lo - i < NESTED_LOOKBACK; i--) {
		if (addr < f->syms[i - 1].end)
			return f->names + f->syms[i - 1].name;
	}
	return NULL;
}

static void sym_file__free(struct sym_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->segs);
	free(f->syms);
	free(f->names);
	free(f);
}

static struct sym_file *sym_file__new(int fd, const char *path)
{
	struct sym_file *f = calloc(1, sizeof(*f));
	const char *slash;

	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	slash = strrchr(f->path, '/');
	f->base = slash && slash[1] ? slash + 1 : f->path;
	f->fd = fd;
	return f;
}

/* ---- the vDSO ---- */

/* Copy the vDSO image of @pid (ours as a stand-in if its memory is not readable). */
static void *read_vdso(int pid, const struct proc_map *m, size_t *len)
{
	void *buf, *base = (void *)getauxval(AT_SYSINFO_EHDR);
	const struct proc_map *own;
	struct proc_maps self;
	bool ok = false;

	*len = m->end - m->start;
	if (*len > VDSO_MAX_SIZE)
		return NULL;
	buf = malloc(*len);
	if (!buf)
		return NULL;
	if (!procmaps__read_mem(pid, m->start, buf, *len))
		return buf;
	/*
	 * Every native process maps the same vDSO image; compat (32-bit) ones
	 * have another of a different size, so only trust ours if sizes match.
	 */
	if (base && !procmaps__read(getpid(), &self)) {
		own = procmaps__find(&self, (unsigned long)base);
		ok = own && own->start == (unsigned long)base && own->end - own->start == *len;
		procmaps__free(&self);
	}
	if (ok) {
		memcpy(buf, base, *len);
		return buf;
	}
	free(buf);
	return NULL;
}

static __u64 fnv1a(const unsigned char *p, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static int cache_file(struct symbolizer *s, __u64 k1, __u64 k2, struct sym_file *f)
{
	void *old;
	int err = hmap_put(&s->files, k1, k2, f, &old);

	if (err)
		return err;
	s->stats.files++;
	if (++s->held_fds > MAX_HELD_FDS)
		sym_file__index(s, f);
	return 0;
}

/* The vDSO as a file: a memfd holding its image, one per distinct image. */
static struct sym_file *get_vdso(struct symbolizer *s, int pid, const struct proc_map *m)
{
	struct sym_file *f = NULL;
	size_t len;
	void *img = read_vdso(pid, m, &len);
	__u64 key;
	int fd;

	if (!img)
		return NULL;
	key = fnv1a(img, len) ^ len;
	f = hmap_get(&s->files, VDSO_DEV, key);
	if (f)
		goto out;
	fd = memfd_create("wprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		goto out;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		goto out;
	}
	f = sym_file__new(fd, "[vdso]");
	if (!f) {
		close(fd);
		goto out;
	}
	if (cache_file(s, VDSO_DEV, key, f)) {
		sym_file__free(f);
		f = NULL;
	}
out:
	free(img);
	return f;
}

static struct sym_file *get_file(struct symbolizer *s, int pid, const struct proc_map *m)
{
	__u64 dev = (__u64)m->dev_major << 32 | m->dev_minor;
	struct sym_file *f;
	int fd;

	if (!m->path || !proc_map__is_exec(m))
		return NULL; /* only code gets symbolized */
	if (m->path[0] == '[')
		return strcmp(m->path, "[vdso]") ? NULL : get_vdso(s, pid, m);
	f = hmap_get(&s->files, dev, m->inode);
	if (f)
		return f;
	fd = m->inode ? procmaps__open_file(pid, m) : -1;
	if (fd < 0) {
		s->stats.files_failed++;
		return NULL;
	}
	f = sym_file__new(fd, m->path);
	if (!f) {
		close(fd);
		return NULL;
	}
	if (cache_file(s, dev, m->inode, f)) {
		sym_file__free(f);
		return NULL;
	}
	return f;
}

/* ---- processes ---- */

static void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	procmaps__free(&snap->maps);
	free(snap->files);
	free(snap);
}

static void proc__drop_snapshots(struct proc *p)
{
	while (p->snaps) {
		struct snapshot *older = p->snaps->older;

		snapshot__free(p->snaps);
		p->snaps = older;
	}
}

static bool same_code_mapping(const struct proc_map *a, const struct proc_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && !strcmp(a->perms, b->perms) &&
	       !strcmp(a->path ? a->path : "", b->path ? b->path : "");
}

/* Does @maps have exactly the executable mappings of @snap? Only those matter for names. */
static bool same_code(const struct snapshot *snap, const struct proc_maps *maps)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < snap->maps.nr && !proc_map__is_exec(&snap->maps.maps[i]))
			i++;
		while (j < maps->nr && !proc_map__is_exec(&maps->maps[j]))
			j++;
		if (i == snap->maps.nr || j == maps->nr)
			return i == snap->maps.nr && j == maps->nr;
		if (!same_code_mapping(&snap->maps.maps[i++], &maps->maps[j++]))
			return false;
	}
}

/*
 * Same code, other data mappings: take the new maps, keeping the files of
 * the code mappings (same_code() said they pair up in order).
 */
static int snapshot__replace_data(struct snapshot *snap, struct proc_maps *maps)
{
	struct sym_file **files = calloc(maps->nr ? maps->nr : 1, sizeof(*files));
	size_t i, j = 0;

	if (!files)
		return -ENOMEM;
	for (i = 0; i < maps->nr; i++) {
		if (!proc_map__is_exec(&maps->maps[i]))
			continue;
		while (!proc_map__is_exec(&snap->maps.maps[j]))
			j++;
		files[i] = snap->files[j++];
	}
	procmaps__free(&snap->maps);
	free(snap->files);
	snap->maps = *maps;
	snap->files = files;
	maps->maps = NULL;
	maps->nr = 0;
	return 0;
}

/*
 * An older snapshot only serves code unmapped since: drop its data mappings
 * and the code that @newer has too (lookups find that one first). Old
 * snapshots thus cost memory in proportion to what changed.
 */
static void snapshot__prune(struct snapshot *snap, const struct snapshot *newer)
{
	size_t i, j = 0;

	for (i = 0; i < snap->maps.nr; i++) {
		const struct proc_map *m = &snap->maps.maps[i], *n;

		n = procmaps__find(&newer->maps, m->start);
		if (!proc_map__is_exec(m) || (n && same_code_mapping(m, n))) {
			free(snap->maps.maps[i].path);
			continue;
		}
		snap->maps.maps[j] = snap->maps.maps[i];
		snap->files[j++] = snap->files[i];
	}
	snap->maps.nr = j;
}

/* Field 22 of /proc/PID/stat, in clock ticks since boot. */
static int read_start_time(int pid, __u64 *start_time)
{
	char path[64], buf[1024], *p;
	int fd, field;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n ? -errno : -ESRCH;
	buf[n] = '\0';
	/* The command name may contain spaces and ')': skip to its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EINVAL;
	*start_time = strtoull(p + 1, NULL, 10);
	return 0;
}

static struct proc *get_proc(struct symbolizer *s, int pid, __u64 start_time)
{
	struct proc *p = hmap_get(&s->procs, pid, 0);
	void *old;

	if (p) {
		if (p->start_time != start_time) {
			/* The pid was reused: the old snapshots describe another program. */
			proc__drop_snapshots(p);
			p->start_time = start_time;
			p->gen = ++s->gen;
		}
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->start_time = start_time;
	p->gen = ++s->gen;
	if (hmap_put(&s->procs, pid, 0, p, &old)) {
		free(p);
		return NULL;
	}
	return p;
}

int symbolizer__add_pid(struct symbolizer *s, int pid)
{
	struct proc_maps maps = {};
	struct snapshot *snap = NULL;
	__u64 start_time;
	struct proc *p;
	size_t i;
	int err;

	if (!s || pid <= 0)
		return -EINVAL;
	err = read_start_time(pid, &start_time);
	if (err)
		return err;
	err = procmaps__read(pid, &maps);
	if (err)
		return err;
	if (!maps.nr)
		return 0; /* kernel thread, or a zombie: nothing (more) to capture */
	p = get_proc(s, pid, start_time);
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (p->snaps && same_code(p->snaps, &maps)) {
		err = snapshot__replace_data(p->snaps, &maps);
		goto cleanup;
	}
	snap = calloc(1, sizeof(*snap));
	if (!snap || !(snap->files = calloc(maps.nr, sizeof(*snap->files)))) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < maps.nr; i++)
		snap->files[i] = get_file(s, pid, &maps.maps[i]);
	snap->maps = maps;
	maps.maps = NULL;
	maps.nr = 0;
	if (p->snaps) {
		snapshot__prune(p->snaps, snap);
		if (!p->snaps->maps.nr) {
			struct snapshot *older = p->snaps->older;

			snapshot__free(p->snaps);
			p->snaps = older;
		}
	}
	snap->older = p->snaps;
	p->snaps = snap;
	snap = NULL;
	p->gen = ++s->gen;
cleanup:
	snapshot__free(snap);
	procmaps__free(&maps);
	return err;
}

/* ---- naming ---- */

/*
 * The mapping of @ip: executable ones first, newest snapshot first, since a
 * sampled instruction was in code; else whatever the newest snapshot has.
 */
static const struct proc_map *proc__find(const struct proc *p, __u64 ip, struct sym_file **file)
{
	const struct proc_map *data = NULL, *m;
	const struct snapshot *snap;

	for (snap = p->snaps; snap; snap = snap->older) {
		m = procmaps__find(&snap->maps, ip);
		if (!m)
			continue;
		if (proc_map__is_exec(m)) {
			*file = snap->files[m - snap->maps.maps];
			return m;
		}
		if (!data)
			data = m;
	}
	*file = NULL;
	return data;
}

/* Returns the name (in @fallback or in a file's names) and sets *ret to 0 or 1. */
static const char *resolve_user(struct symbolizer *s, const struct proc *p, int pid, __u64 ip,
				char *fallback, int *ret)
{
	const struct proc_map *m;
	struct sym_file *file;
	const char *name;
	__u64 off;

	*ret = 1;
	if (!p) {
		snprintf(fallback, FALLBACK_LEN, "[unknown-pid-%d]+0x%llx", pid,
			 (unsigned long long)ip);
		return fallback;
	}
	m = proc__find(p, ip, &file);
	if (!m) {
		snprintf(fallback, FALLBACK_LEN, "[unmapped]+0x%llx", (unsigned long long)ip);
		return fallback;
	}
	off = ip - m->start + m->pgoff;
	if (file) {
		name = sym_file__find(s, file, off, proc_map__is_exec(m));
		if (name) {
			*ret = 0;
			return name;
		}
	}
	if (!m->path || !m->path[0])
		snprintf(fallback, FALLBACK_LEN, "[anon]+0x%llx", (unsigned long long)ip);
	else if (!strcmp(m->path, "[vdso]"))
		snprintf(fallback, FALLBACK_LEN, "[vdso]+0x%llx", (unsigned long long)off);
	else if (m->path[0] == '[')
		snprintf(fallback, FALLBACK_LEN, "%.200s+0x%llx", m->path, (unsigned long long)ip);
	else
		snprintf(fallback, FALLBACK_LEN, "%.256s+0x%llx",
			 strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path,
			 (unsigned long long)off);
	return fallback;
}

static void count_user(struct symbolizer *s, int ret)
{
	if (ret == 0)
		s->stats.user_named++;
	else if (ret == 1)
		s->stats.user_fallback++;
}

int symbolizer__user(struct symbolizer *s, int pid, __u64 ip, char *buf, size_t size)
{
	struct proc *p;
	struct name_ent *ent, *old;
	char fallback[FALLBACK_LEN];
	const char *name;
	size_t len;
	int ret, err;

	if (!s || !buf || !size)
		return -EINVAL;
	p = hmap_get(&s->procs, pid, 0);
	ent = hmap_get(&s->names, (__u32)pid, ip);
	if (ent && ent->gen == (p ? p->gen : 0)) {
		snprintf(buf, size, "%s", ent->name);
		count_user(s, ent->ret);
		return ent->ret;
	}
	name = resolve_user(s, p, pid, ip, fallback, &ret);
	snprintf(buf, size, "%s", name);
	count_user(s, ret);

	len = strlen(name);
	ent = malloc(sizeof(*ent) + len + 1);
	if (!ent)
		return ret; /* the name is right, just not cached */
	ent->gen = p ? p->gen : 0;
	ent->ret = ret;
	memcpy(ent->name, name, len + 1);
	err = hmap_put(&s->names, (__u32)pid, ip, ent, (void **)&old);
	if (err)
		free(ent);
	else
		free(old);
	return ret;
}

int symbolizer__kernel(struct symbolizer *s, __u64 ip, char *buf, size_t size)
{
	const char *name;

	if (!s || !buf || !size)
		return -EINVAL;
	if (!s->ksyms_tried) {
		/* Failure (kptr_restrict) is remembered: every kernel frame then falls back. */
		s->ksyms = kallsyms__load(NULL);
		s->ksyms_tried = true;
	}
	name = kallsyms__find(s->ksyms, ip, NULL);
	if (name) {
		snprintf(buf, size, "%s", name);
		s->stats.kernel_named++;
		return 0;
	}
	snprintf(buf, size, "[kernel]+0x%llx", (unsigned long long)ip);
	s->stats.kernel_fallback++;
	return 1;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	if (s)
		*st = s->stats;
	else
		memset(st, 0, sizeof(*st));
}

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* libelf refuses to work until told which ELF version the caller speaks. */
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->procs.cap; i++) {
		struct proc *p = s->procs.slots[i].val;

		if (p) {
			proc__drop_snapshots(p);
			free(p);
		}
	}
	for (i = 0; i < s->files.cap; i++)
		sym_file__free(s->files.slots[i].val);
	for (i = 0; i < s->names.cap; i++)
		free(s->names.slots[i].val);
	free(s->procs.slots);
	free(s->files.slots);
	free(s->names.slots);
	kallsyms__free(s->ksyms);
	free(s);
}
