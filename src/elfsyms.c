// SPDX-License-Identifier: GPL-2.0-only
/*
 * One ELF image's symbols, copied out of libdw into a sorted array with
 * one entry per address, so that a lookup is a binary search and libdw's
 * own tables (and the file) can be let go once indexed.
 *
 * DWARF, for inlined functions (dwinline.c), is only opened on the first
 * elfsyms__inlines() call, from the fd kept for that purpose; most runs
 * never need it.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <zlib.h>

#include "demangle.h"
#include "dwinline.h"
#include "elfsyms.h"
#include "hmap.h"
#include "sectsyms.h"
#include "zsects.h"

/* Symbols this far back are checked for one that contains an address (nested symbols). */
#define NESTED_LOOKBACK 8
#define MAX_BUILD_ID 64
#define MAX_INLINE_DEPTH 32
/*
 * A debug file is read whole for its CRC: up to this size, a bound on what
 * another user's .gnu_debuglink can make root read. Bigger ones are refused.
 */
#define DEBUG_CRC_MAX_BYTES (4ULL << 30)
#define DEBUG_CRC_CHUNK (256 << 10)
/* Marks a symbol whose name was tried and is not demangled. */
#define NOT_MANGLED ((char *)1)

struct seg {
	__u64 off, filesz, vaddr, memsz;
	bool exec;
};

struct fsym {
	__u64 start, end; /* module addresses, [start, end) */
	__u32 name;	  /* offset in names */
	bool mangled;
};

/* The inlined calls at one address. */
struct inl {
	int nr;
	char *names[];
};

struct elfsyms {
	int fd; /* -1 once given to libdw or closed */
	char *path;
	const char *base;
	unsigned char build_id[MAX_BUILD_ID];
	size_t build_id_len;
	int richness;
	unsigned int owner_uid; /* of the file: whose debug files it may name */
	bool indexed;
	bool symtab; /* symbols from a .symtab (the file's or a debug file's), not .dynsym alone */
	char **debuginfo_path;
	unsigned int debug_refused; /* ELFSYMS_REFUSED_* of the candidates refused */
	char *debug_refused_path;   /* the first one */
	bool loadable;		    /* ET_EXEC or ET_DYN: what libdw may be given */
	bool inflate_refused;	    /* compressed sections refused, of the file or a debug file */
	char *inflate_refused_path; /* the first such file */
	__u64 bias; /* module address - ELF vaddr */
	struct seg *segs;
	size_t nr_segs;
	struct fsym *syms;
	size_t nr_syms;
	char *names;
	char **demangled; /* parallel to syms, filled on use; NULL until the first */
	/* DWARF, opened on first use */
	Dwfl_Callbacks callbacks;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct dwinline *dwi;
	bool dwarf_tried;
	/* the dwz alt file the DWARF links to, opened by wprof (dwz_alt()) */
	bool alt_tried, alt_ok;
	Dwarf *alt;
	Elf *alt_elf;
	int alt_fd;
	char *alt_refused_path; /* the link's name, when none passed */
	struct hmap inlines; /* module address -> struct inl */
};

/* Read the build-id and what the file holds itself; the fd stays open. */
static int probe(struct elfsyms *e)
{
	Elf *elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	const void *id;
	size_t shstrndx;
	ssize_t len;

	struct stat st;
	GElf_Ehdr eh;
	__u64 bytes;

	if (!elf)
		return -EINVAL;
	if (!fstat(e->fd, &st))
		e->owner_uid = st.st_uid;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EINVAL;
	}
	/* libdw relocates ET_REL files as it opens them, inflating what it relocates */
	e->loadable = gelf_getehdr(elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len > 0 && len <= MAX_BUILD_ID) {
		memcpy(e->build_id, id, len);
		e->build_id_len = len;
	}
	/* this look at the names must not inflate them past the bound (counted when indexed) */
	if (elf_getshdrstrndx(elf, &shstrndx) || zsects__check(elf, ZSECTS_NAMES, &bytes))
		shstrndx = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_type == SHT_SYMTAB && e->richness < 1)
			e->richness = 1;
		name = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, ".debug_info"))
			e->richness = 2;
	}
	elf_end(elf);
	return 0;
}

struct elfsyms *elfsyms__new(int fd, const char *path)
{
	struct elfsyms *e = calloc(1, sizeof(*e));
	const char *slash;
	int err;

	if (!e || !(e->path = strdup(path))) {
		free(e);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	e->fd = fd;
	e->alt_fd = -1;
	slash = strrchr(e->path, '/');
	e->base = slash && slash[1] ? slash + 1 : e->path;
	/* libelf refuses to work until told which ELF version the caller speaks. */
	err = elf_version(EV_CURRENT) == EV_NONE ? -EINVAL : probe(e);
	if (err) {
		elfsyms__free(e);
		errno = -err;
		return NULL;
	}
	return e;
}

size_t elfsyms__build_id(const struct elfsyms *e, const unsigned char **id)
{
	*id = e->build_id;
	return e->build_id_len;
}

int elfsyms__richness(const struct elfsyms *e)
{
	return e->richness;
}

const char *elfsyms__basename(const struct elfsyms *e)
{
	return e->base;
}

bool elfsyms__indexed(const struct elfsyms *e)
{
	return e->indexed;
}

bool elfsyms__has_symtab(const struct elfsyms *e)
{
	return e->symtab;
}

bool elfsyms__holds_fd(const struct elfsyms *e)
{
	return e->fd >= 0;
}

unsigned int elfsyms__debug_refused(const struct elfsyms *e, const char **path)
{
	*path = e->debug_refused_path;
	return e->debug_refused;
}

bool elfsyms__alt_refused(const struct elfsyms *e, const char **path)
{
	*path = e->alt_refused_path;
	return e->alt_refused_path;
}

bool elfsyms__inflate_refused(const struct elfsyms *e, const char **path)
{
	*path = e->inflate_refused_path;
	return e->inflate_refused;
}

/* @path: a debug file's, NULL for @e's own */
static void refuse_inflate(struct elfsyms *e, const char *path)
{
	e->inflate_refused = true;
	if (!e->inflate_refused_path)
		e->inflate_refused_path = strdup(path ? path : e->path); /* failing loses the example */
}

/* ---- indexing ---- */

struct tsym {
	__u64 start, size;
	const char *name;
	__u32 rank;
};

/*
 * Below every symbol's rank: a symbol table's own name at an address wins.
 * It marks a name from sectsyms, kept whole ("f@plt").
 */
#define SECTSYM_RANK UINT32_MAX

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

/* Length of @name without a symbol version ("memcpy@@GLIBC_2.14", "x@GLIBC_2.2.5"). */
static size_t unversioned_len(const char *name)
{
	const char *at = strchr(name + 1, '@');

	return at ? (size_t)(at - name) : strlen(name);
}

static int read_segments(struct elfsyms *e, Elf *elf)
{
	size_t nr, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nr))
		return -EINVAL;
	e->segs = calloc(nr ? nr : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segs[e->nr_segs++] = (struct seg){
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
static __u64 segment_end(const struct elfsyms *e, __u64 addr)
{
	size_t i;

	for (i = 0; i < e->nr_segs; i++) {
		__u64 lo = e->segs[i].vaddr + e->bias;

		if (addr >= lo && addr - lo < e->segs[i].memsz)
			return lo + e->segs[i].memsz;
	}
	return addr + 1;
}

/* Length of a name as it is kept. */
static size_t kept_len(const struct tsym *t)
{
	return t->rank == SECTSYM_RANK ? strlen(t->name) : unversioned_len(t->name);
}

/*
 * Copy libdw's function symbols, and the section symbols of @elf (the file
 * itself, not a debug file), into a sorted array with one entry per address.
 */
static int read_symbols(struct elfsyms *e, Dwfl_Module *mod, Elf *elf)
{
	struct tsym *t = NULL;
	struct sectsym *ss = NULL;
	size_t nr = 0, names_len = 0, i, j;
	int n = dwfl_module_getsymtab(mod), nr_ss, err = 0;

	if (n < 0)
		n = 0; /* no symbol table at all */
	nr_ss = sectsyms__read(elf, e->bias, &ss);
	if (nr_ss < 0)
		nr_ss = 0; /* out of memory: only these names are lost */
	if (!n && !nr_ss)
		return 0; /* every address falls back */
	t = calloc((size_t)n + nr_ss, sizeof(*t));
	if (!t) {
		sectsyms__free(ss, nr_ss);
		return -ENOMEM;
	}
	for (i = 0; i < (size_t)nr_ss; i++)
		t[nr++] = (struct tsym){ ss[i].start, ss[i].size, ss[i].name, SECTSYM_RANK };
	for (i = 1; i < (size_t)n; i++) {
		const char *name;
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		int type;

		name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !name[0] || name[0] == '@')
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
		names_len += kept_len(&t[i]) + 1;
	}
	nr = j;
	e->syms = calloc(nr ? nr : 1, sizeof(*e->syms));
	e->names = malloc(names_len ? names_len : 1);
	if (!e->syms || !e->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0, names_len = 0; i < nr; i++) {
		struct fsym *fs = &e->syms[i];
		size_t len = kept_len(&t[i]);

		fs->start = t[i].start;
		if (t[i].size)
			fs->end = t[i].start + t[i].size;
		else if (i + 1 < nr)
			fs->end = t[i + 1].start; /* assembly without .size: up to the next one */
		else
			fs->end = segment_end(e, t[i].start);
		fs->name = names_len;
		fs->mangled = !strncmp(t[i].name, "_Z", 2) || !strncmp(t[i].name, "_R", 2);
		memcpy(e->names + names_len, t[i].name, len);
		e->names[names_len + len] = '\0';
		names_len += len + 1;
	}
	e->nr_syms = nr;
cleanup:
	free(t);
	sectsyms__free(ss, nr_ss);
	return err;
}

/*
 * The CRC32 of @fd's content, @size bytes (zlib's crc32() is the CRC that
 * binutils stores in .gnu_debuglink). 0, or -errno (-EIO: the file got shorter).
 */
static int file_crc(int fd, __u64 size, uLong *crc)
{
	unsigned char *buf = malloc(DEBUG_CRC_CHUNK);
	__u64 off = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	*crc = crc32(0L, Z_NULL, 0);
	while (off < size) {
		size_t want = size - off < DEBUG_CRC_CHUNK ? size - off : DEBUG_CRC_CHUNK;
		ssize_t n = pread(fd, buf, want, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		*crc = crc32(*crc, buf, n);
		off += n;
	}
	free(buf);
	return err;
}

static void refuse_debug_file(struct elfsyms *e, const char *path, unsigned int why)
{
	e->debug_refused |= why;
	if (!e->debug_refused_path)
		e->debug_refused_path = strdup(path); /* failing only loses the example */
}

/*
 * Whether libdw may read debug file @elf (at @path) for @use: what it would
 * inflate stays within the bound (and, for DWARF, kept open, within what is
 * left of the run's budget, taken then). A refused one is remembered for
 * the summary.
 */
static bool inflates_ok(struct elfsyms *e, Elf *elf, const char *path, enum zsects_use use)
{
	__u64 bytes;

	if (!zsects__check(elf, use, &bytes) && (use != ZSECTS_DWARF || !zsects__debit(bytes)))
		return true;
	refuse_inflate(e, path);
	return false;
}

/*
 * Open a candidate debug file for @e, or -1: only a regular file (a FIFO or
 * a device named by another user must not hang or feed a root tool, hence
 * O_NONBLOCK) whose content the owner of @e could read anyway (world
 * readable, or theirs), and of @e's own build: with @e's build-id when @e
 * has one, else (@by_link, found by .gnu_debuglink) with the CRC @crc the
 * link holds. The build-id decides when there is one, as in libdw and
 * gdb's build-id search: it names the build, and a debug file compressed
 * or dwz-ed after the link was made keeps it but not its CRC. A debug file
 * of another build (stale, or a rebuild's) would put wrong names on
 * frames: it is refused and remembered for the summary. @want: the
 * build-id to match (@e's, or that of the alt file its DWARF links to).
 */
static int open_debug_file(struct elfsyms *e, const char *path, const unsigned char *want,
			   size_t want_len, bool by_link, GElf_Word crc, enum zsects_use use)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	const void *id;
	bool ok = false;
	uLong sum;
	Elf *elf;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !((st.st_mode & S_IROTH) || (st.st_uid == e->owner_uid && (st.st_mode & S_IRUSR))))
		goto out;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		goto out;
	}
	if (want_len) {
		ok = dwelf_elf_gnu_build_id(elf, &id) == (ssize_t)want_len &&
		     !memcmp(id, want, want_len);
		if (!ok)
			refuse_debug_file(e, path, ELFSYMS_REFUSED_BUILD_ID);
	} else if (!by_link) {
		ok = true;
	} else if ((__u64)st.st_size > DEBUG_CRC_MAX_BYTES) {
		refuse_debug_file(e, path, ELFSYMS_REFUSED_TOO_BIG);
	} else {
		ok = !file_crc(fd, st.st_size, &sum) && sum == crc;
		if (!ok)
			refuse_debug_file(e, path, ELFSYMS_REFUSED_CRC);
	}
	if (ok && !inflates_ok(e, elf, path, use))
		ok = false;
	elf_end(elf);
out:
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static int try_debug_file(struct elfsyms *e, char *path, bool by_link, GElf_Word crc,
			  enum zsects_use use, char **found)
{
	int fd = path ? open_debug_file(e, path, e->build_id, e->build_id_len, by_link, crc, use)
		      : -1;

	if (fd >= 0)
		*found = path;
	else
		free(path);
	return fd;
}

/*
 * libdw's search for separate debug files (by build-id under the absolute
 * directories of the path, by .gnu_debuglink next to the file, in its
 * .debug/ and under those directories), done as a root tool must do what
 * other users' files ask of it: the debuglink is a file name, never a path
 * ("../../root/x" is ignored), and each candidate goes through
 * open_debug_file(). Last, libdw's search by build-id alone: under root's
 * directories, and debuginfod when DEBUGINFOD_URLS is set.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	struct elfsyms *e = *userdata;
	char *dirs, *dir, *rest, *fdir, *copy, *path;
	enum zsects_use use;
	int fd = -1;
	bool ok;
	Elf *elf;

	if (!e || !*e->debuginfo_path)
		return -1;
	/* the DWARF side's module reads DWARF; the indexing one, symbols */
	use = mod == e->mod ? ZSECTS_DWARF : ZSECTS_SYMBOLS;
	if (debuglink && (strchr(debuglink, '/') || !strcmp(debuglink, ".") ||
			  !strcmp(debuglink, "..") || !debuglink[0]))
		debuglink = NULL;
	dirs = strdup(*e->debuginfo_path);
	copy = file_name ? strdup(file_name) : NULL;
	fdir = copy ? dirname(copy) : NULL;
	/* "" (next to the file) is an entry too: strsep(), not strtok() */
	for (rest = dirs; rest && fd < 0;) {
		dir = strsep(&rest, ":");
		path = NULL;
		if (dir[0] == '/' && e->build_id_len) {
			char hex[2 * MAX_BUILD_ID + 1];

			for (size_t i = 0; i < e->build_id_len; i++)
				sprintf(hex + 2 * i, "%02x", e->build_id[i]);
			if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2) < 0)
				path = NULL;
			fd = try_debug_file(e, path, false, 0, use, debuginfo_file_name);
		}
		if (fd >= 0 || !debuglink || !fdir)
			continue;
		path = NULL;
		if (dir[0] == '/' && asprintf(&path, "%s%s/%s", dir, fdir, debuglink) < 0)
			path = NULL;
		else if (dir[0] != '/' &&
			 asprintf(&path, "%s/%s%s%s", fdir, dir, dir[0] ? "/" : "", debuglink) < 0)
			path = NULL;
		fd = try_debug_file(e, path, true, crc, use, debuginfo_file_name);
	}
	free(dirs);
	free(copy);
	if (fd >= 0)
		return fd;
	/*
	 * Without a file name or debuglink, libdw's search is by build-id
	 * alone (with one it would also try "FILE.debug" next to FILE).
	 */
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0,
					  debuginfo_file_name);
	if (fd < 0)
		return fd;
	/* not ELF, libdw would try to decompress the whole file */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = elf && elf_kind(elf) == ELF_K_ELF && inflates_ok(e, elf, *debuginfo_file_name, use);
	if (elf)
		elf_end(elf);
	if (ok)
		return fd;
	close(fd);
	free(*debuginfo_file_name);
	*debuginfo_file_name = NULL;
	return -1;
}

/*
 * A Dwfl holding just this file, reported at 0: module addresses are the
 * ELF's vaddrs. Its compressed sections are bounded for @use first, in
 * libdw's own view of the file.
 */
static Dwfl_Module *report(struct elfsyms *e, Dwfl **dwfl, enum zsects_use use)
{
	Dwfl_Module *mod;
	GElf_Addr bias;
	Elf *elf;
	int err;

	*dwfl = e->loadable ? dwfl_begin(&e->callbacks) : NULL;
	if (!*dwfl)
		return NULL;
	mod = dwfl_report_elf(*dwfl, e->base, e->path, e->fd, 0, true);
	if (mod) {
		void **userdata;

		e->fd = -1; /* libdw's now, closed by dwfl_end() */
		/* find_debuginfo() gets it */
		if (dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
			*userdata = e;
	}
	if (dwfl_report_end(*dwfl, NULL, NULL) || !mod)
		return NULL;
	elf = dwfl_module_getelf(mod, &bias);
	err = elf ? zsects__guard(elf, use) : -EINVAL;
	if (err > 0)
		refuse_inflate(e, NULL);
	return err < 0 ? NULL : mod;
}

void elfsyms__index(struct elfsyms *e, char **debuginfo_path, bool keep_fd)
{
	const char *debug_file = NULL;
	int fd = -1, saved;
	Dwfl_Module *mod;
	GElf_Addr bias;
	Dwfl *dwfl;
	Elf *elf;

	if (e->indexed)
		return;
	e->indexed = true;
	e->debuginfo_path = debuginfo_path;
	/*
	 * libdw's standard callbacks find separate debug files by build-id
	 * under each absolute directory of the path, by .gnu_debuglink next to
	 * the file and under those directories, and last through debuginfod.
	 */
	e->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = e->debuginfo_path,
	};
	if (e->fd < 0)
		return;
	if (keep_fd)
		fd = dup(e->fd); /* for DWARF later: this one goes to libdw now */
	mod = report(e, &dwfl, ZSECTS_SYMBOLS);
	if (!mod)
		goto cleanup;
	elf = dwfl_module_getelf(mod, &bias);
	e->bias = bias;
	if (!elf || read_segments(e, elf))
		goto cleanup;
	read_symbols(e, mod, elf);
	/* a debug file, if libdw found one, is known once it read the symbols */
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug_file);
	e->symtab = e->richness >= 1 || debug_file;
cleanup:
	dwfl_end(dwfl);
	saved = e->fd;
	if (saved >= 0)
		close(saved);
	e->fd = fd;
}

bool elfsyms__addr(struct elfsyms *e, __u64 file_off, bool exec, __u64 *addr)
{
	const struct seg *seg = NULL;
	size_t i;

	/* Segments may share a file page; an executable mapping wants the executable one. */
	for (i = 0; i < e->nr_segs; i++) {
		const struct seg *sg = &e->segs[i];

		if (file_off < sg->off || file_off - sg->off >= sg->filesz)
			continue;
		if (!seg || (sg->exec == exec && seg->exec != exec))
			seg = sg;
	}
	if (!seg)
		return false;
	*addr = file_off - seg->off + seg->vaddr + e->bias;
	return true;
}

/*
 * The demangled form of a kept name, malloc'd: a name from sectsyms keeps
 * its suffix ("_ZN1a1fEv@plt" is "a::f@plt"; a kept symbol table name has
 * no '@'). NULL: print it as it is.
 */
static char *demangle_kept(const char *name)
{
	const char *at = strchr(name + 1, '@');
	char *base, *d, *out;

	if (!at)
		return demangle__name(name);
	base = strndup(name, at - name);
	d = base ? demangle__name(base) : NULL;
	free(base);
	if (!d || asprintf(&out, "%s%s", d, at) < 0)
		out = NULL;
	free(d);
	return out;
}

const char *elfsyms__find(struct elfsyms *e, __u64 addr)
{
	size_t i, lo = 0, hi = e->nr_syms;
	struct fsym *fs = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > 0 && lo - i < NESTED_LOOKBACK; i--) {
		if (addr < e->syms[i - 1].end) {
			fs = &e->syms[i - 1];
			break;
		}
	}
	if (!fs)
		return NULL;
	if (!fs->mangled)
		return e->names + fs->name;
	/* Demangled on first use: most symbols of a big C++ library never are. */
	if (!e->demangled && !(e->demangled = calloc(e->nr_syms, sizeof(*e->demangled))))
		return e->names + fs->name;
	i = fs - e->syms;
	if (!e->demangled[i]) {
		e->demangled[i] = demangle_kept(e->names + fs->name);
		if (!e->demangled[i])
			e->demangled[i] = NOT_MANGLED;
	}
	return e->demangled[i] == NOT_MANGLED ? e->names + fs->name : e->demangled[i];
}

/* ---- DWARF: inlined functions, call frame information ---- */

/* The file's DWARF side (a Dwfl of its own), opened on first use. */
static Dwfl_Module *open_dwarf(struct elfsyms *e)
{
	if (!e->indexed)
		return NULL;
	if (!e->dwarf_tried) {
		e->dwarf_tried = true;
		if (e->fd >= 0)
			e->mod = report(e, &e->dwfl, ZSECTS_DWARF);
	}
	return e->mod;
}

Dwarf_CFI *elfsyms__cfi(struct elfsyms *e, __u64 *bias)
{
	Dwfl_Module *mod = open_dwarf(e);
	Dwarf_Addr b = 0;
	Dwarf_CFI *cfi;

	if (!mod)
		return NULL;
	cfi = dwfl_module_eh_cfi(mod, &b);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &b);
	*bias = b;
	return cfi;
}

/*
 * Hand @dw the alt file @path if it passes open_debug_file()'s rules for
 * build-id @id, and, its DWARF read, links to no alt file in turn (libdw
 * would open that one on its own). 0, or -errno.
 */
static int set_alt(struct elfsyms *e, Dwarf *dw, const char *path, const void *id, size_t len)
{
	const char *name;
	const void *id2;
	int fd = open_debug_file(e, path, id, len, false, 0, ZSECTS_DWARF);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Dwarf *alt = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;

	if (!alt || dwelf_dwarf_gnu_debugaltlink(alt, &name, &id2) != 0) {
		dwarf_end(alt);
		elf_end(elf);
		if (fd >= 0)
			close(fd);
		return -ENOENT;
	}
	dwarf_setalt(dw, alt);
	e->alt = alt;
	e->alt_elf = elf;
	e->alt_fd = fd;
	return 0;
}

/*
 * DWARF that dwz shrank names strings and entries in an alt file, by path
 * and build-id (.gnu_debugaltlink). libdw would open that path itself, as
 * root, whatever it is (a FIFO hangs it) and with no bound on what it
 * inflates: wprof looks for it instead, by build-id under the absolute
 * debug directories, then at the path the link names (relative: to the
 * file holding the DWARF), each through open_debug_file(), and hands libdw
 * the one that passes. None: the DWARF is not read for names at all, as
 * libdw would look for the alt file again on the first name in it.
 * Whether @mod's DWARF may be read for names.
 */
static bool dwz_alt(struct elfsyms *e, Dwfl_Module *mod)
{
	const char *name, *file = NULL;
	char *dirs, *rest, *dir, *path, *copy;
	const unsigned char *id;
	Dwarf_Addr bias;
	Dwarf *dw;
	ssize_t len;
	int err = -ENOENT;

	if (e->alt_tried)
		return e->alt_ok;
	e->alt_tried = true;
	dw = dwfl_module_getdwarf(mod, &bias);
	/* libdw looks for an alt file only when this finds a link */
	len = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &name, (const void **)&id) : 0;
	if (len <= 0 || !name[0]) {
		e->alt_ok = len <= 0;
		goto out;
	}
	dirs = strdup(*e->debuginfo_path);
	for (rest = dirs; rest && err && len <= MAX_BUILD_ID;) {
		char hex[2 * MAX_BUILD_ID + 1];

		dir = strsep(&rest, ":");
		if (dir[0] != '/')
			continue;
		for (ssize_t i = 0; i < len; i++)
			sprintf(hex + 2 * i, "%02x", id[i]);
		if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2) < 0)
			continue;
		err = set_alt(e, dw, path, id, len);
		free(path);
	}
	free(dirs);
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &file);
	copy = strdup(file ? file : e->path);
	if (err && copy &&
	    asprintf(&path, "%s%s%s", name[0] == '/' ? "" : dirname(copy), name[0] == '/' ? "" : "/",
		     name) >= 0) {
		err = set_alt(e, dw, path, id, len);
		free(path);
	}
	free(copy);
	e->alt_ok = !err;
out:
	if (!e->alt_ok && !e->alt_refused_path)
		e->alt_refused_path = strdup(len > 0 ? name : e->path); /* failing loses the count */
	return e->alt_ok;
}

static void inl_free(struct inl *in)
{
	int i;

	for (i = 0; in && i < in->nr; i++)
		free(in->names[i]);
	free(in);
}

static struct inl *lookup_inlines(struct elfsyms *e, __u64 addr)
{
	char *names[MAX_INLINE_DEPTH];
	int nr = dwinline__find(e->dwi, addr, names, MAX_INLINE_DEPTH);
	struct inl *in = malloc(sizeof(*in) + nr * sizeof(in->names[0]));

	if (!in) {
		while (nr--)
			free(names[nr]);
		return NULL;
	}
	in->nr = nr;
	memcpy(in->names, names, nr * sizeof(names[0]));
	return in;
}

int elfsyms__inlines(struct elfsyms *e, __u64 addr, const char **names, int max)
{
	struct inl *in = hmap__get(&e->inlines, addr, 0);
	Dwfl_Module *mod;
	void *old;
	int i;

	if (!e->dwi && (mod = open_dwarf(e)) && dwz_alt(e, mod))
		e->dwi = dwinline__new(mod);
	if (!e->dwi)
		return 0;
	if (!in) {
		in = lookup_inlines(e, addr);
		if (!in)
			return 0;
		if (hmap__put(&e->inlines, addr, 0, in, &old)) {
			inl_free(in);
			return 0;
		}
	}
	for (i = 0; i < in->nr && i < max; i++)
		names[i] = in->names[i];
	return i;
}

void elfsyms__free(struct elfsyms *e)
{
	size_t i;

	if (!e)
		return;
	if (e->fd >= 0)
		close(e->fd);
	dwinline__free(e->dwi);
	dwfl_end(e->dwfl);
	/* libdw leaves an alt file set by dwarf_setalt() to its caller */
	dwarf_end(e->alt);
	elf_end(e->alt_elf);
	if (e->alt_fd >= 0)
		close(e->alt_fd);
	free(e->alt_refused_path);
	free(e->debug_refused_path);
	free(e->inflate_refused_path);
	for (i = 0; e->demangled && i < e->nr_syms; i++)
		if (e->demangled[i] != NOT_MANGLED)
			free(e->demangled[i]);
	for (i = 0; i < e->inlines.cap; i++)
		inl_free(e->inlines.slots[i].val);
	hmap__clear(&e->inlines);
	free(e->demangled);
	free(e->path);
	free(e->segs);
	free(e->syms);
	free(e->names);
	free(e);
}
