// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython processes: see pyproc.h.
 *
 * A process runs CPython when a file it maps (the python executable, or a
 * libpython a program embeds) defines _PyRuntime, the interpreter's state,
 * where the list of its thread states starts. Its version is Py_Version's
 * value (3.11 on), read from the file: each version lays its structures out
 * differently, and only the layouts below are known; another version is
 * named in the summary, never guessed at. Every file it maps is untrusted:
 * only its symbol tables and one word of its data are read, with libelf's
 * bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "hmap.h"
#include "proclive.h"
#include "procmaps.h"
#include "pyproc.h"
#include "wprof.h"

/*
 * Offsets on x86-64, as offsetof() gives them with each version's headers
 * (Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head;
 * pycore_interp.h: PyInterpreterState.threads.head; Include/cpython/pystate.h:
 * PyThreadState.next, native_thread_id, cframe; pycore_frame.h: _PyCFrame,
 * _PyInterpreterFrame; Include/cpython/code.h: PyCodeObject;
 * Include/cpython/unicodeobject.h: sizeof PyASCIIObject and
 * PyCompactUnicodeObject). The same in every patch release of a version.
 */
struct py_layout {
	__u32 version; /* major << 8 | minor */
	struct wprof_py_proc off;
};

static const struct py_layout layouts[] = {
	/*
	 * 3.10: Include/internal/pycore_interp.h: PyInterpreterState.tstate_head;
	 * Include/cpython/pystate.h: PyThreadState.frame, thread_id;
	 * Include/cpython/frameobject.h: struct _frame f_back, f_code, f_lasti;
	 * no qualname: co_name
	 */
	{ 0x030a, { .interp_head = 32, .threads_head = 8, .ts_next = 8,
			      .ts_native_tid = 176, .ts_frame = 24, .cframe_frame = WPROF_PY_NONE,
			      .fr_code = 32, .fr_previous = 24, .fr_instr = 96, .fr_entry = 96,
			      .co_qualname = 112, .co_filename = 104, .co_firstlineno = 40,
			      .co_linetable = 120, .str_ascii = 48, .str_compact = 72,
			      .entry_kind = WPROF_PY_ENTRY_EVERY, .tid_is_fsbase = 1,
			      .instr_is_index = 1, .line_kind = WPROF_PY_LINES_310 } },
	{ 0x030b, { .interp_head = 40, .threads_head = 16, .ts_next = 8, .ts_native_tid = 160,
		    .ts_frame = 56, .cframe_frame = 8, .fr_code = 32, .fr_previous = 48,
		    .fr_instr = 56, .fr_entry = 68, .co_qualname = 128, .co_filename = 112,
		    .co_firstlineno = 72, .co_linetable = 136, .str_ascii = 48, .str_compact = 72,
		    .entry_kind = WPROF_PY_ENTRY_FLAG, .code_units = 184 } },
	{ 0x030c, { .interp_head = 40, .threads_head = 72, .ts_next = 8, .ts_native_tid = 144,
		    .ts_frame = 56, .cframe_frame = 0, .fr_code = 0, .fr_previous = 8,
		    .fr_instr = 56, .fr_entry = 70, .co_qualname = 128, .co_filename = 112,
		    .co_firstlineno = 68, .co_linetable = 136, .str_ascii = 40, .str_compact = 56,
		    .entry_kind = WPROF_PY_ENTRY_OWNER, .code_units = 192 } },
};

/*
 * 3.13 on: _PyRuntime begins with _Py_DebugOffsets (Include/internal/
 * pycore_runtime.h), the offsets of this very build, which its initializer
 * in the file holds. Where the fields wprof needs are, in 3.13 (offsetof()).
 */
#define DBG_SIZE 584 /* sizeof(_Py_DebugOffsets), 3.13 */
#define DBG_VERSION 8
#define DBG_FREE_THREADED 16
#define DBG_INTERP_HEAD 40
#define DBG_THREADS_HEAD 72
#define DBG_TS_NEXT 168
#define DBG_TS_FRAME 184
#define DBG_TS_NATIVE_TID 200
#define DBG_FR_PREVIOUS 232
#define DBG_FR_CODE 240
#define DBG_FR_INSTR 248
#define DBG_FR_OWNER 264
#define DBG_CO_FILENAME 280
#define DBG_CO_QUALNAME 296
#define DBG_CO_LINETABLE 304
#define DBG_CO_FIRSTLINENO 312
#define DBG_CO_CODE 344
#define DBG_STR_ASCII 560

/* The layout of a 3.13 build from its debug offsets at @buf: false if they are not such. */
static bool layout_313(const unsigned char *buf, struct py_layout *out)
{
	static const int fields[] = {
		DBG_INTERP_HEAD, DBG_THREADS_HEAD, DBG_TS_NEXT, DBG_TS_FRAME, DBG_TS_NATIVE_TID,
		DBG_FR_PREVIOUS, DBG_FR_CODE, DBG_FR_INSTR, DBG_FR_OWNER, DBG_CO_FILENAME,
		DBG_CO_QUALNAME, DBG_CO_LINETABLE, DBG_CO_FIRSTLINENO, DBG_CO_CODE, DBG_STR_ASCII,
	};
	__u64 v[sizeof(fields) / sizeof(fields[0])], x;

	if (memcmp(buf, "xdebugpy", 8))
		return false;
	memcpy(&x, buf + DBG_VERSION, 8);
	if ((x >> 16) != 0x030d)
		return false;
	memcpy(&x, buf + DBG_FREE_THREADED, 8);
	if (x) /* a free-threaded build: its objects are laid out otherwise */
		return false;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		memcpy(&v[i], buf + fields[i], 8);
		if (v[i] >= WPROF_PY_NONE)
			return false;
	}
	*out = (struct py_layout){
		.version = 0x030d,
		.off = { .interp_head = v[0], .threads_head = v[1], .ts_next = v[2], .ts_frame = v[3],
			 .ts_native_tid = v[4], .cframe_frame = WPROF_PY_NONE, .fr_previous = v[5],
			 .fr_code = v[6], .fr_instr = v[7], .fr_entry = v[8], .co_filename = v[9],
			 .co_qualname = v[10], .co_linetable = v[11], .co_firstlineno = v[12],
			 .str_ascii = v[14], .str_compact = v[14] + 16,
			 .entry_kind = WPROF_PY_ENTRY_OWNER, .code_units = v[13] },
	};
	return true;
}

/* A code object's names, as UTF-8. */
struct py_name {
	char *name, *file;
	__u32 line;       /* its first */
	__u32 code_units; /* where its instructions begin (0: not known) */
	__u8 line_kind;   /* enum wprof_py_lines */
	unsigned char *lines; /* the start of its location table */
	size_t nlines;
	struct wprof_py_code_key key; /* what it is named for */
	bool collided;    /* another key has its id: its frames are not named */
};

/* A process found to run a CPython it knows. */
struct py_found {
	__u32 pid;
	struct wprof_py_proc pp;
};

struct pyproc {
	int procs_fd, codes_fd; /* -1 until bound */
	/* (pid, start_ticks) -> its stack's start (an exec moves it) + 1: looked at */
	struct hmap seen;
	struct hmap told; /* pid -> its start_ticks + 1: what the BPF side holds */
	struct py_found *found; /* before the maps were bound */
	size_t nr_found, cap_found;
	struct hmap names; /* code id -> struct py_name */
	struct pyproc_stats st;
};

struct pyproc *pyproc__new(void)
{
	struct pyproc *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->procs_fd = py->codes_fd = -1;
	return py;
}

/* Tell the BPF side (now, or once bound) how to read @pid's frames. */
static bool tell(struct pyproc *py, __u32 pid, const struct wprof_py_proc *pp)
{
	struct py_found *f;
	void *old;

	if (hmap__put(&py->told, pid, 0, (void *)(uintptr_t)(pp->start_ticks + 1), &old))
		return false;
	if (py->procs_fd >= 0)
		return !bpf_map_update_elem(py->procs_fd, &pid, pp, BPF_ANY);
	if (py->nr_found == py->cap_found) {
		f = realloc(py->found, (py->cap_found = py->cap_found ? 2 * py->cap_found : 16) *
					       sizeof(*f));
		if (!f)
			return false;
		py->found = f;
	}
	py->found[py->nr_found++] = (struct py_found){ .pid = pid, .pp = *pp };
	return true;
}

int pyproc__bind(struct pyproc *py, int procs_fd, int codes_fd)
{
	int err = 0;

	py->procs_fd = procs_fd;
	py->codes_fd = codes_fd;
	for (size_t i = 0; i < py->nr_found && !err; i++)
		if (bpf_map_update_elem(procs_fd, &py->found[i].pid, &py->found[i].pp, BPF_ANY))
			err = -errno;
	free(py->found);
	py->found = NULL;
	py->nr_found = py->cap_found = 0;
	return err;
}

void pyproc__free(struct pyproc *py)
{
	if (!py)
		return;
	for (size_t i = 0; i < py->names.cap; i++) {
		struct py_name *n = py->names.slots[i].val;

		if (n) {
			free(n->name);
			free(n->file);
			free(n->lines);
			free(n);
		}
	}
	hmap__clear(&py->names);
	hmap__clear(&py->seen);
	hmap__clear(&py->told);
	free(py->found);
	free(py);
}

/* Whether a file of this name may be a CPython: python3.11, libpython3.11.so.1.0, python3 */
static bool maybe_python(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	return !strncmp(base, "python", 6);
}

/* 0x030a from ".../libpython3.10.so.1.0" or ".../python3.10"; 0 if not there. */
static __u32 name_version(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned int major, minor;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (p && sscanf(p, "python%u.%u", &major, &minor) == 2 && major < 10 && minor < 100)
		return major << 8 | minor;
	return 0;
}

struct py_syms {
	__u64 runtime, version_at; /* symbol values (0: none) */
	bool has_runtime, has_version;
};

/* _PyRuntime and Py_Version from the symbol table of section @scn. */
static void find_syms(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct py_syms *s)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || sh->sh_entsize != sizeof(Elf64_Sym))
		return;
	n = data->d_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		if (!strcmp(name, "_PyRuntime")) {
			s->runtime = sym.st_value;
			s->has_runtime = true;
		} else if (!strcmp(name, "Py_Version")) {
			s->version_at = sym.st_value;
			s->has_version = true;
		}
	}
}

/* @len bytes at address @addr of the file's sections that hold data (not .bss). */
static bool read_at(Elf *elf, __u64 addr, void *out, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC))
			continue;
		/* the file's numbers: no sum that can wrap */
		if (addr < sh.sh_addr || addr - sh.sh_addr > sh.sh_size ||
		    len > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr > d->d_size ||
		    len > d->d_size - (addr - sh.sh_addr))
			return false;
		memcpy(out, (const char *)d->d_buf + (addr - sh.sh_addr), len);
		return true;
	}
	return false;
}

/* Where the file mapped at @m is loaded: its load bias, from its program headers. */
static bool load_bias(Elf *elf, const struct proc_map *m, __u64 *bias)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* the segment that holds the mapping's first file page */
		if (m->pgoff < (ph.p_offset & ~0xfffULL) || m->pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = m->start - (ph.p_vaddr + (m->pgoff - ph.p_offset));
		return true;
	}
	return false;
}

/*
 * Look at file @m of @pid: 1 if it is a CPython whose frames can now be
 * read, 0 if it is none, -1 if it is one of a version not known (@ver set),
 * -ENOSPC if the BPF side had no room for it.
 */
static int look_at(struct pyproc *py, int pid, __u64 start_ticks, __u64 start_stack,
		   const struct proc_map *m, char *ver, size_t ver_size)
{
	const struct py_layout *found = NULL;
	unsigned char dbg[DBG_SIZE];
	struct py_layout l313;
	struct py_syms s = {};
	struct wprof_py_proc pp;
	Elf_Scn *scn = NULL;
	__u32 version = 0, key = pid;
	__u64 bias;
	int fd, ret = 0;
	Elf *elf;

	fd = procmaps__open_file(pid, m);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			find_syms(elf, scn, &sh, &s);
	}
	if (!s.has_runtime)
		goto out;
	if (s.has_version && read_at(elf, s.version_at, &version, sizeof(version)))
		version >>= 16; /* PY_VERSION_HEX: major, minor, micro, level */
	ret = -1;
	/* before 3.11: the file's name says it, if anything does */
	if (!version && (version = name_version(m->path)) >= 0x030b)
		version = 0; /* a file that says otherwise: not believed */
	if (version)
		snprintf(ver, ver_size, "%u.%u", version >> 8, version & 0xff);
	else
		snprintf(ver, ver_size, "before 3.11");
	if (version == 0x030d && read_at(elf, s.runtime, dbg, sizeof(dbg)) && layout_313(dbg, &l313))
		found = &l313;
	for (size_t i = 0; !found && i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			found = &layouts[i];
	if (found && load_bias(elf, m, &bias)) {
		pp = found->off;
		pp.start_ticks = start_ticks;
		pp.start_stack = start_stack;
		pp.runtime = bias + s.runtime;
		ret = tell(py, key, &pp) ? 1 : -ENOSPC;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* @pid runs no CPython wprof reads (any more). */
static void forget(struct pyproc *py, __u32 pid)
{
	size_t j = 0;

	hmap__del(&py->told, pid, 0);
	if (py->procs_fd >= 0) {
		bpf_map_delete_elem(py->procs_fd, &pid);
		return;
	}
	for (size_t i = 0; i < py->nr_found; i++)
		if (py->found[i].pid != pid)
			py->found[j++] = py->found[i];
	py->nr_found = j;
}

void pyproc__gone(struct pyproc *py, int pid)
{
	if (py)
		forget(py, pid);
}

void pyproc__prune(struct pyproc *py, struct proclive *live)
{
	for (size_t i = 0; py && i < py->told.cap; i++) {
		struct hmap_slot *sl = &py->told.slots[i];

		if (sl->val && !proclive__alive(live, sl->k1, (uintptr_t)sl->val - 1)) {
			forget(py, sl->k1);
			i--; /* the table may have moved another entry here */
		}
	}
}

void pyproc__add_maps(struct pyproc *py, int pid, __u64 start_ticks, const struct proc_maps *maps)
{
	const char *last = NULL;
	char ver[16] = "";
	void *old;

	/*
	 * A program found once (or found to be a version not read) is not
	 * looked at again; another is at each new read of its maps (a
	 * libpython it dlopen()s later), which costs a look at the names of
	 * its files. An exec is looked at anew (CMD's, of wprof's own child).
	 */
	if (!py || hmap__get(&py->seen, pid, start_ticks) == (void *)(uintptr_t)(maps->start_stack + 1))
		return;
	for (size_t i = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];
		int r;

		if (!m->path || m->path[0] != '/' || !maybe_python(m->path) ||
		    (last && !strcmp(last, m->path)))
			continue;
		last = m->path;
		r = look_at(py, pid, start_ticks, maps->start_stack, m, ver, sizeof(ver));
		if (r == 0)
			continue;
		hmap__put(&py->seen, pid, start_ticks, (void *)(uintptr_t)(maps->start_stack + 1),
			  &old); /* failing (ENOMEM) only costs a look again */
		if (r > 0) {
			py->st.procs++;
			return;
		}
		if (r == -ENOSPC) {
			py->st.full++;
			break;
		}
		if (!py->st.unknown++)
			snprintf(py->st.unknown_ver, sizeof(py->st.unknown_ver), "%s", ver);
		break;
	}
	/* not (or no longer: an exec) a CPython wprof reads */
	forget(py, pid);
}

/* @len bytes of @kind bytes a character (1: Latin-1, 2: UCS-2, 4: UCS-4) as UTF-8. */
static char *to_utf8(const char *s, size_t len, unsigned int kind, bool cut)
{
	char *out = malloc(len / (kind ? kind : 1) * 4 + 5), *p = out;

	if (!out)
		return NULL;
	if (!kind) {
		strcpy(out, "?");
		return out;
	}
	for (size_t i = 0; i + kind <= len; i += kind) {
		__u32 c = 0;

		memcpy(&c, s + i, kind); /* little-endian */
		if (c < 0x80) {
			*p++ = c;
		} else if (c < 0x800) {
			*p++ = 0xc0 | c >> 6;
			*p++ = 0x80 | (c & 0x3f);
		} else if (c < 0x10000) {
			*p++ = 0xe0 | c >> 12;
			*p++ = 0x80 | (c >> 6 & 0x3f);
			*p++ = 0x80 | (c & 0x3f);
		} else if (c < 0x110000) {
			*p++ = 0xf0 | c >> 18;
			*p++ = 0x80 | (c >> 12 & 0x3f);
			*p++ = 0x80 | (c >> 6 & 0x3f);
			*p++ = 0x80 | (c & 0x3f);
		}
	}
	if (cut) {
		strcpy(p, "...");
		p += 3;
	}
	*p = '\0';
	return out;
}

/* Name the code object of @v, of process @pid: 0, or -ENOMEM. */
static int keep_name(struct pyproc *py, const struct wprof_py_code_key *key,
		     const struct wprof_py_code *v)
{
	struct py_name *n = hmap__get(&py->names, v->id, 0);
	void *old;

	if (n) {
		/* seen again after a drain, or another code object of the same id */
		if (!n->collided && memcmp(&n->key, key, sizeof(*key))) {
			n->collided = true;
			py->st.collided++;
		}
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->name = to_utf8(v->name, v->name_len < sizeof(v->name) ? v->name_len : sizeof(v->name),
			  v->name_kind, v->name_cut);
	n->file = to_utf8(v->file, v->file_len < sizeof(v->file) ? v->file_len : sizeof(v->file),
			  v->file_kind, v->file_cut);
	n->line = v->firstlineno;
	n->key = *key;
	/* of the version its process ran as it was seen, whatever the pid runs now */
	n->code_units = v->code_units;
	n->line_kind = v->line_kind;
	n->nlines = v->lines_len < sizeof(v->lines) ? v->lines_len : sizeof(v->lines);
	n->lines = n->nlines ? malloc(n->nlines) : NULL;
	if (n->lines)
		memcpy(n->lines, v->lines, n->nlines);
	else
		n->nlines = 0;
	if (!n->name || !n->file || hmap__put(&py->names, v->id, 0, n, &old)) {
		free(n->name);
		free(n->file);
		free(n->lines);
		free(n);
		return -ENOMEM;
	}
	py->st.codes++;
	return 0;
}

void pyproc__take_codes(struct pyproc *py)
{
	struct wprof_py_code_key *keys = NULL, *k, next;
	struct wprof_py_code v;
	size_t nr = 0, cap = 0;

	if (!py || py->codes_fd < 0)
		return;
	/* the keys first: entries the BPF side adds meanwhile wait for the next call */
	while (!bpf_map_get_next_key(py->codes_fd, nr ? &keys[nr - 1] : NULL, &next)) {
		if (nr == cap) {
			k = realloc(keys, (cap = cap ? 2 * cap : 256) * sizeof(*keys));
			if (!k)
				break;
			keys = k;
		}
		keys[nr++] = next;
	}
	for (size_t i = 0; i < nr; i++) {
		/* kept before it goes: the BPF side names a code object seen again anew */
		if (!bpf_map_lookup_elem(py->codes_fd, &keys[i], &v) && keep_name(py, &keys[i], &v))
			break;
		bpf_map_delete_elem(py->codes_fd, &keys[i]);
	}
	free(keys);
}

/* A varint of the location table at @t[*@i] (6 bits a byte, the low first), *@i moved on. */
static __u64 varint(const unsigned char *t, size_t n, size_t *i)
{
	__u64 v = 0;
	int shift = 0;

	while (*i < n && shift < 60) {
		unsigned char b = t[(*i)++];

		v |= (__u64)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

/*
 * The line of code unit @unit, from location table @t (@n bytes, the start
 * of it maybe) of a function whose first line is @line (3.11 on: each entry
 * a first byte 1CCCCLLL, C its kind, L + 1 the units it covers, then the
 * line's change as its kind has it). -1: not known (past @n, or none).
 */
static long table_line(const unsigned char *t, size_t n, long line, size_t unit)
{
	size_t i = 0, at = 0;

	while (i < n) {
		unsigned char b = t[i++];
		int kind = (b >> 3) & 15;
		size_t len = (b & 7) + 1;
		__u64 d;

		if (!(b & 0x80))
			return -1; /* not an entry's first byte: not such a table */
		switch (kind) {
		case 15: /* no location */
			break;
		case 14: /* long form: line change, end line, columns */
		case 13: /* no columns: the line's change only */
			d = varint(t, n, &i);
			if (d >> 40) /* no program has such lines: not such a table */
				return -1;
			line += d & 1 ? -(long)(d >> 1) : (long)(d >> 1);
			if (kind == 14) {
				varint(t, n, &i);
				varint(t, n, &i);
				varint(t, n, &i);
			}
			break;
		case 10: case 11: case 12: /* one line, 0 to 2 below, two column bytes */
			line += kind - 10;
			i += 2;
			break;
		default: /* short form: the same line, a column byte */
			i += 1;
			break;
		}
		if (i > n)
			return -1;
		if (unit < at + len)
			return kind == 15 ? -1 : line;
		at += len;
	}
	return -1;
}

/*
 * 3.10's line table: (bytes, line change) byte pairs, a change of -128 for
 * none. The line of the instruction at byte @off, or -1.
 */
static long table_line_310(const unsigned char *t, size_t n, long line, size_t off)
{
	size_t start, end = 0;

	/* each pair a range of its own: a change of 0 is the same line, -128 none */
	for (size_t i = 0; i + 1 < n; i += 2) {
		int d = (signed char)t[i + 1];

		start = end;
		end = start + t[i];
		if (d != -128)
			line += d;
		if (off >= start && off < end)
			return d == -128 ? -1 : line;
	}
	return -1;
}

int pyproc__frame_name(const struct pyproc *py, __u64 w, __u64 at, char *buf, size_t size)
{
	static const char *const cuts[WPROF_PY_CUT_CNT] = {
		[WPROF_PY_CUT_READ] = "[py: cut: frame unreadable]",
		[WPROF_PY_CUT_DEPTH] = "[py: cut: too deep]",
		[WPROF_PY_CUT_THREAD] = "[py: cut: thread state unreadable]",
	};
	const struct py_name *n;
	const char *base;
	long line = -1;

	if (w >> 48 == WPROF_FRAME_PY_CUT >> 48) {
		__u64 c = w & 0xffff;

		snprintf(buf, size, "%s", c < WPROF_PY_CUT_CNT && cuts[c] ? cuts[c] : "[py: cut]");
		return 0;
	}
	n = py ? hmap__get(&py->names, WPROF_PY_ADDR(w), 0) : NULL;
	if (!n || n->collided) {
		snprintf(buf, size, n ? "[py: code id of two code objects]" : "[py: code not named]");
		return 1;
	}
	/* the line it is at, where its instruction and table say it; else its first */
	at &= 0xffffffffULL;
	if (n->line_kind == WPROF_PY_LINES_310)
		line = table_line_310(n->lines, n->nlines, n->line, at * 2);
	else if (n->code_units && at >= n->code_units)
		line = table_line(n->lines, n->nlines, n->line, (at - n->code_units) / 2);
	base = strrchr(n->file, '/');
	base = base ? base + 1 : n->file;
	if (line < 0) /* past the part of its table kept (a long function) */
		snprintf(buf, size, "%s (%s)", n->name, base);
	else
		snprintf(buf, size, "%s (%s:%ld)", n->name, base, line);
	return 0;
}

void pyproc__print_notes(const struct pyproc *py, FILE *f)
{
	if (py && py->st.collided)
		fprintf(f, "wprof: lost: %zu Python code id%s given to two code objects: their frames "
			"show as [py: code id of two code objects]\n", py->st.collided,
			py->st.collided == 1 ? "" : "s");
	if (py && py->st.full)
		fprintf(f, "wprof: lost: %zu CPython process%s not read, the BPF side's table of them "
			"full: %s stacks show the interpreter's C functions only\n", py->st.full,
			py->st.full == 1 ? "" : "es", py->st.full == 1 ? "its" : "their");
	if (!py || !py->st.unknown)
		return;
	fprintf(f, "wprof: %zu process%s run%s CPython %s, whose frames wprof cannot read yet (it "
		"reads 3.10 to 3.13): %s stacks show the interpreter's C functions only\n",
		py->st.unknown, py->st.unknown == 1 ? "" : "es", py->st.unknown == 1 ? "s" : "",
		py->st.unknown_ver, py->st.unknown == 1 ? "its" : "their");
}

void pyproc__stats(const struct pyproc *py, struct pyproc_stats *out)
{
	if (py)
		*out = py->st;
	else
		memset(out, 0, sizeof(*out));
}
