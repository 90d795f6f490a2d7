// SPDX-License-Identifier: GPL-2.0-only
/*
 * User and kernel symbolization.
 *
 * Caches, all hash tables:
 *   files:     (dev, inode) -> struct sym_file, opened at add_pid time (the
 *              fd keeps a deleted or unmounted file readable).
 *   build_ids: build-id -> the same struct sym_file: two paths to one
 *              build-id (a copy, a container's layer, a stripped twin)
 *              share one index, that of the file with the most symbols.
 *              A struct sym_file holds a struct elfsyms, indexed lazily on
 *              the first lookup.
 *   procs:     pid -> struct proc: a list of maps snapshots, newest first,
 *              and the process's perf map.
 *   names:     (pid, inlines, ip) -> the resulting names, valid while the
 *              process's generation is unchanged.
 *   origins:   (path, build-id) -> struct sym_origin, one per file a name
 *              came from, for the names' entries to point at.
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
#include <sys/mman.h>
#include <sys/resource.h>

#include "elfsyms.h"
#include "hmap.h"
#include "kallsyms.h"
#include "perfmap.h"
#include "proclive.h"
#include "procmaps.h"
#include "strmap.h"
#include "symbolize.h"
#include "util.h"

/* Keys of the vDSO images in the files table: no real file has this device. */
#define VDSO_DEV (~0ULL)
#define FALLBACK_LEN 512
/* Longer names (C++ templates) are cut to this, including the NUL. */
#define MAX_NAME_LEN 1024
/* One real function and the calls inlined into it; deeper nests lose their innermost ones. */
#define MAX_FRAMES_PER_IP 33
#define DEFAULT_DEBUG_PATH ":.debug:/usr/lib/debug"

/* Suffixes of frame names, by kind. */
enum { KIND_PLAIN, KIND_JIT, KIND_INLINE };
static const char *const kind_suffix[] = { "", "_[j]", "_[i]" };

struct sym_file {
	struct elfsyms *es; /* NULL: the file is not ELF (remembered, not retried) */
};

struct snapshot {
	struct snapshot *older;
	struct proc_maps maps;
	struct sym_file **files; /* parallel to maps.maps; NULL when not backed by an ELF file */
	__u64 taken_ns;          /* when these mappings were read (now_ns()) */
};

struct proc {
	__u64 start_time; /* tells a reused pid from the process we captured */
	__u32 gen;	  /* changes whenever cached names of this pid may be stale */
	struct snapshot *snaps;
	struct perfmap *jit;
	bool jit_checked;   /* the perf map was refreshed since the last add_pid */
	bool jit_counted;   /* counted in stats.jit_maps */
	bool jit_untrusted; /* counted in stats.jit_untrusted */
	bool jit_truncated; /* counted in stats.jit_truncated */
	bool live;          /* in symbolizer.live: not seen ended yet */
	__u32 unnamed_calls; /* ended: symbolizer__forget() calls in a row that found it unnamed */
};

/*
 * A file whose code fell back to file+0xOFF, with how many frames did; or,
 * with jit, the executable of processes whose anonymous code ([anon]+0x...,
 * JIT code no perf map named) did.
 */
struct unnamed_mod {
	char *path;
	__u64 frames;
	bool has_symtab, unreadable, not_code, jit;
	bool jit_mapped; /* jit: the processes had a perf map, which lacked those addresses */
};

/* The names of one address: @nr times a kind byte and a NUL-terminated name. */
struct name_ent {
	__u32 gen;
	int ret;
	int nr;
	struct unnamed_mod *mod; /* a fallback in a file: counted when a frame gets it */
	const struct sym_origin *origin; /* NULL: no file's */
	char text[];
};

struct symbolizer {
	/* names asked for again (a long block's frames): not counted a second time */
	bool quiet;
	struct hmap files, build_ids, procs, names;
	struct hmap unnamed; /* path hash, length -> struct unnamed_mod */
	struct sym_file **all_files; /* every struct sym_file once, to free them */
	size_t nr_files, cap_files;
	__u32 gen;
	__u32 held_fds, fd_budget;
	char *debuginfo_path; /* libdw's search path; elfsyms hold &debuginfo_path */
	struct name_ent *uncached; /* the last entry that did not fit in the cache */
	struct kallsyms *ksyms;
	bool ksyms_tried;
	struct symbolizer_stats stats;
	struct strmap *origin_ids; /* "path\0build-id" -> index in origins */
	struct sym_origin **origins; /* each malloc'd with its strings: entries point at them */
	size_t nr_origins, cap_origins;
	const struct sym_origin *kernel_origin;
	/* pids of processes not seen ended, for symbolizer__prune() */
	__u32 *live;
	size_t nr_live, cap_live;
};

/* ---- files ---- */

static void index_file(struct symbolizer *s, struct sym_file *f, bool keep_fd)
{
	const char *path;
	unsigned int refused;

	if (!f->es || elfsyms__indexed(f->es))
		return;
	elfsyms__index(f->es, &s->debuginfo_path, keep_fd);
	if (!elfsyms__holds_fd(f->es))
		s->held_fds--;
	refused = elfsyms__debug_refused(f->es, &path);
	s->stats.debug_build_id_mismatch += !!(refused & ELFSYMS_REFUSED_BUILD_ID);
	s->stats.debug_crc_mismatch += !!(refused & ELFSYMS_REFUSED_CRC);
	s->stats.debug_too_big += !!(refused & ELFSYMS_REFUSED_TOO_BIG);
	if (path && !s->stats.debug_refused_path)
		s->stats.debug_refused_path = path; /* the elfsyms lives as long as we do */
}

static struct sym_file *new_file(struct symbolizer *s, struct elfsyms *es)
{
	struct sym_file *f;

	if (s->nr_files == s->cap_files) {
		size_t cap = s->cap_files ? s->cap_files * 2 : 64;
		struct sym_file **all = realloc(s->all_files, cap * sizeof(*all));

		if (!all)
			return NULL;
		s->all_files = all;
		s->cap_files = cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->es = es;
	s->all_files[s->nr_files++] = f;
	if (es) {
		s->stats.files++;
		s->held_fds++;
	}
	return f;
}

/*
 * The struct sym_file for @es: a new one, or the one of the same build-id,
 * which gets @es instead of its own if @es has more symbols and the other
 * was not used yet (names and CFI handed out stay valid). Takes @es.
 */
static struct sym_file *share_by_build_id(struct symbolizer *s, struct elfsyms *es)
{
	const unsigned char *id, *other_id;
	size_t len = elfsyms__build_id(es, &id);
	struct sym_file *f = NULL;
	__u64 key = 0;
	void *old;

	if (len) {
		key = hmap__hash_bytes(id, len);
		f = hmap__get(&s->build_ids, key, len);
		if (f && (elfsyms__build_id(f->es, &other_id) != len || memcmp(id, other_id, len)))
			return new_file(s, es); /* a hash collision: no sharing */
	}
	if (!f) {
		f = new_file(s, es);
		if (f && len)
			hmap__put(&s->build_ids, key, len, f, &old); /* failing only loses sharing */
		return f;
	}
	s->stats.files_shared++;
	if (elfsyms__richness(es) > elfsyms__richness(f->es) && !elfsyms__indexed(f->es)) {
		elfsyms__free(f->es); /* its fd, held until now, is @es's now */
		f->es = es;
	} else {
		elfsyms__free(es);
	}
	return f;
}

/* Open @fd as ELF and cache it under (@dev, @ino). Takes @fd. */
static struct sym_file *add_file(struct symbolizer *s, __u64 dev, __u64 ino, int fd,
				 const char *path)
{
	struct elfsyms *es = elfsyms__new(fd, path);
	struct sym_file *f;
	void *old;

	if (!es && errno == ENOMEM)
		return NULL;
	if (!es)
		s->stats.files_failed++;
	f = es ? share_by_build_id(s, es) : new_file(s, NULL);
	if (!f) {
		elfsyms__free(es);
		return NULL;
	}
	if (hmap__put(&s->files, dev, ino, f, &old))
		return f->es ? f : NULL; /* usable, just looked up again next time */
	/* Each file waiting to be indexed holds an fd: past the budget, index at once. */
	if (s->held_fds > s->fd_budget && f->es && !elfsyms__indexed(f->es)) {
		index_file(s, f, false);
		s->stats.files_closed_early++;
	}
	return f->es ? f : NULL;
}

/* The vDSO as a file: a memfd holding its image, one per distinct image. */
static struct sym_file *get_vdso(struct symbolizer *s, int pid, const struct proc_map *m)
{
	struct sym_file *f = NULL;
	size_t len;
	void *img = procmaps__copy_vdso(pid, m, &len);
	__u64 key;
	int fd;

	if (!img)
		return NULL;
	key = hmap__hash_bytes(img, len) ^ len;
	f = hmap__get(&s->files, VDSO_DEV, key);
	if (f)
		goto out;
	fd = memfd_create("wprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		goto out;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		goto out;
	}
	f = add_file(s, VDSO_DEV, key, fd, "[vdso]");
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
	f = hmap__get(&s->files, dev, m->inode);
	if (f)
		return f->es ? f : NULL;
	fd = m->inode ? procmaps__open_file(pid, m) : -1;
	if (fd < 0) {
		s->stats.files_failed++;
		return NULL;
	}
	return add_file(s, dev, m->inode, fd, m->path);
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

static void proc__free(struct proc *p)
{
	if (!p)
		return;
	proc__drop_snapshots(p);
	perfmap__free(p->jit);
	free(p);
}

static struct proc *get_proc(struct symbolizer *s, int pid, __u64 start_time)
{
	struct proc *p = hmap__get(&s->procs, pid, 0);
	void *old;

	if (p && p->start_time == start_time)
		return p;
	if (p) {
		/* The pid was reused: what we hold describes another program. */
		bool live = p->live; /* its pid is in s->live once */

		proc__drop_snapshots(p);
		perfmap__free(p->jit);
		memset(p, 0, sizeof(*p));
		p->live = live;
	} else {
		p = calloc(1, sizeof(*p));
		if (!p || hmap__put(&s->procs, pid, 0, p, &old)) {
			free(p);
			return NULL;
		}
	}
	p->start_time = start_time;
	p->gen = ++s->gen;
	if (p->live)
		return p;
	if (s->nr_live == s->cap_live) {
		size_t cap = s->cap_live ? 2 * s->cap_live : 256;
		__u32 *n = realloc(s->live, cap * sizeof(*n));

		if (!n)
			return p; /* only never compacted */
		s->live = n;
		s->cap_live = cap;
	}
	s->live[s->nr_live++] = pid;
	p->live = true;
	return p;
}

/*
 * A process that ended keeps of its snapshots what names its code: the
 * executable mappings. Its data mappings name only the frames of a walk
 * gone astray (they then fall back to "[unmapped]"), and they are
 * most of a process's maps: under churn, keeping them made wprof's memory
 * grow by kilobytes per process seen.
 */
static void proc__compact(struct proc *p)
{
	for (struct snapshot *snap = p->snaps; snap; snap = snap->older) {
		size_t j = 0;

		for (size_t i = 0; i < snap->maps.nr; i++) {
			if (!proc_map__is_exec(&snap->maps.maps[i])) {
				free(snap->maps.maps[i].path);
				continue;
			}
			snap->maps.maps[j] = snap->maps.maps[i];
			snap->files[j++] = snap->files[i];
		}
		snap->maps.nr = j;
		/*
		 * Into new arrays, the old ones freed whole: shrunk in place,
		 * each left a hole too small for the next process's arrays,
		 * and the heap grew by kilobytes per process all the same.
		 */
		if (j) {
			struct proc_map *m = malloc(j * sizeof(*m));
			struct sym_file **f = malloc(j * sizeof(*f));

			if (m && f) {
				memcpy(m, snap->maps.maps, j * sizeof(*m));
				memcpy(f, snap->files, j * sizeof(*f));
				free(snap->maps.maps);
				free(snap->files);
				snap->maps.maps = m;
				snap->files = f;
			} else {
				free(m);
				free(f);
			}
		}
	}
}

void symbolizer__prune(struct symbolizer *s, struct proclive *live)
{
	size_t j = 0;

	for (size_t i = 0; i < s->nr_live; i++) {
		__u32 pid = s->live[i];
		struct proc *p = hmap__get(&s->procs, pid, 0);

		if (!p || !p->live)
			continue;
		if (proclive__alive(live, pid, p->start_time)) {
			s->live[j++] = pid;
			continue;
		}
		p->live = false;
		proc__compact(p);
	}
	s->nr_live = j;
}

size_t symbolizer__forget(struct symbolizer *s, const struct hmap *busy)
{
	struct hmap gone = {};
	__u64 *keys = NULL;
	size_t nr = 0, cap = 0, forgotten = 0;
	void *old;

	for (size_t i = 0; i < s->procs.cap; i++) {
		struct proc *p = s->procs.slots[i].val;
		__u64 pid = s->procs.slots[i].k1;

		if (!p || p->live)
			continue;
		if (hmap__get(busy, pid, 0)) {
			p->unnamed_calls = 0;
			continue;
		}
		/* twice in a row: a key a BPF program was writing as @busy was gathered is seen */
		if (++p->unnamed_calls >= 2 && hmap__put(&gone, pid, 0, p, &old))
			break;
	}
	for (size_t i = 0; i < gone.cap; i++) {
		if (!gone.slots[i].val)
			continue;
		proc__free(hmap__del(&s->procs, gone.slots[i].k1, 0));
		forgotten++;
	}
	/* their cached names: keyed (pid | inlines << 32, ip) */
	for (size_t i = 0; forgotten && i < s->names.cap; i++) {
		if (!s->names.slots[i].val || !hmap__get(&gone, (__u32)s->names.slots[i].k1, 0))
			continue;
		if (array_reserve(&keys, &cap, nr, 2 * sizeof(*keys), 256))
			break; /* the rest stays cached: stale for no process, only memory */
		keys[2 * nr] = s->names.slots[i].k1;
		keys[2 * nr++ + 1] = s->names.slots[i].k2;
	}
	for (size_t i = 0; i < nr; i++)
		free(hmap__del(&s->names, keys[2 * i], keys[2 * i + 1]));
	free(keys);
	hmap__clear(&gone);
	return forgotten;
}

/* Re-read the perf map; a failure only means no JIT names (yet). */
static void refresh_jit(struct symbolizer *s, struct proc *p, int pid)
{
	int ret;

	if (!p->jit && !(p->jit = perfmap__new(pid)))
		return;
	ret = perfmap__refresh(p->jit);
	if (ret > 0)
		p->gen = ++s->gen;
	if (ret == -EPERM && !p->jit_untrusted) {
		p->jit_untrusted = true;
		s->stats.jit_untrusted++;
	}
	if (perfmap__count(p->jit) && !p->jit_counted) {
		p->jit_counted = true;
		s->stats.jit_maps++;
	}
	if (perfmap__truncated(p->jit) && !p->jit_truncated) {
		p->jit_truncated = true;
		s->stats.jit_truncated++;
	}
}

void symbolizer__refresh_jit(struct symbolizer *s, int pid, __u64 start_time)
{
	struct proc *p = s && pid > 0 ? hmap__get(&s->procs, pid, 0) : NULL;

	if (!p || p->start_time != start_time)
		return;
	refresh_jit(s, p, pid);
	p->jit_checked = false; /* lookups may re-read it once more */
}

int symbolizer__add_pid(struct symbolizer *s, int pid)
{
	struct proc_maps maps = {};
	__u64 start_time, read_ns;
	int err;

	if (!s || pid <= 0)
		return -EINVAL;
	err = procmaps__read_proc(pid, &start_time, &maps);
	if (err)
		return err;
	read_ns = now_ns();
	return symbolizer__add_maps(s, pid, start_time, read_ns, &maps);
}

int symbolizer__add_maps(struct symbolizer *s, int pid, __u64 start_time, __u64 read_ns,
			 struct proc_maps *mapsp)
{
	struct proc_maps maps = *mapsp;
	struct snapshot *snap = NULL;
	struct proc *p;
	size_t i;
	int err = 0;

	/* ours now, whatever happens */
	mapsp->maps = NULL;
	mapsp->nr = 0;
	if (!s || pid <= 0) {
		err = -EINVAL;
		goto cleanup;
	}
	if (!maps.nr)
		goto cleanup; /* kernel thread, or a zombie: nothing (more) to capture */
	p = get_proc(s, pid, start_time);
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	refresh_jit(s, p, pid);
	p->jit_checked = false; /* lookups may re-read it once more */
	if (p->snaps && same_code(p->snaps, &maps)) {
		err = snapshot__replace_data(p->snaps, &maps);
		goto cleanup;
	}
	snap = calloc(1, sizeof(*snap));
	if (snap)
		snap->taken_ns = read_ns;
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

/*
 * A copy of @from's code mappings (what names frames: see proc__compact());
 * its files are shared (the symbolizer owns them).
 */
static struct snapshot *snapshot__copy_code(const struct snapshot *from)
{
	size_t n = from->maps.nr;
	struct snapshot *snap = calloc(1, sizeof(*snap));

	if (!snap)
		return NULL;
	snap->taken_ns = from->taken_ns;
	snap->maps.maps = calloc(n ? n : 1, sizeof(*snap->maps.maps));
	snap->files = calloc(n ? n : 1, sizeof(*snap->files));
	if (!snap->maps.maps || !snap->files)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *m = &from->maps.maps[i];
		size_t k = snap->maps.nr;

		if (!proc_map__is_exec(m))
			continue;
		snap->maps.maps[k] = *m;
		snap->maps.maps[k].path = m->path ? strdup(m->path) : NULL;
		if (m->path && !snap->maps.maps[k].path)
			goto fail;
		snap->maps.nr = k + 1; /* procmaps__free() frees the paths up to here */
		snap->files[k] = from->files[i];
	}
	return snap;
fail:
	snapshot__free(snap);
	return NULL;
}

int symbolizer__inherit(struct symbolizer *s, int pid, __u64 start_time, int ppid,
			__u64 pstart, __u64 fork_ns)
{
	const struct proc *parent;
	struct snapshot **oldest, *snap;
	struct proc *p;

	if (!s || pid <= 0 || ppid <= 0 || pid == ppid)
		return -EINVAL;
	parent = hmap__get(&s->procs, ppid, 0);
	/*
	 * An earlier process of the parent's pid is not the parent; code
	 * mappings read after the fork may be an exec's (or a dlopen()'s) that
	 * came after it: better unnamed than named by another program.
	 */
	if (!parent || !parent->snaps || parent->start_time != pstart ||
	    parent->snaps->taken_ns > fork_ns)
		return 0;
	/* the child is gone and its pid is a later process's, read already: not the child */
	p = hmap__get(&s->procs, pid, 0);
	if (p && p->start_time > start_time)
		return 0;
	p = get_proc(s, pid, start_time);
	if (!p)
		return -ENOMEM;
	for (oldest = &p->snaps; *oldest; oldest = &(*oldest)->older)
		if (same_code(*oldest, &parent->snaps->maps))
			return 0; /* read before an exec: it has them */
	snap = snapshot__copy_code(parent->snaps);
	if (!snap)
		return -ENOMEM;
	*oldest = snap;
	p->gen = ++s->gen;
	return 0;
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

/* JIT code: the perf map, re-read once after the last add_pid if it does not know @ip. */
static const char *jit_find(struct symbolizer *s, struct proc *p, int pid, __u64 ip)
{
	const char *name;
	__u64 start_time;

	if (!p->jit)
		return NULL;
	name = perfmap__find(p->jit, ip);
	if (name || p->jit_checked)
		return name;
	p->jit_checked = true;
	/* Not opened yet: by pid, so only while the pid is still this process's (or free). */
	if (!perfmap__is_open(p->jit) && !procmaps__start_time(pid, &start_time) &&
	    start_time != p->start_time)
		return NULL;
	refresh_jit(s, p, pid);
	return perfmap__find(p->jit, ip);
}

static void fallback_name(const struct proc_map *m, __u64 ip, __u64 off, char *buf)
{
	const char *slash;

	if (!m)
		snprintf(buf, FALLBACK_LEN, "[unmapped]");
	else if (!m->path || !m->path[0])
		snprintf(buf, FALLBACK_LEN, "[anon]+0x%llx", (unsigned long long)ip);
	else if (!strcmp(m->path, "[vdso]"))
		snprintf(buf, FALLBACK_LEN, "[vdso]+0x%llx", (unsigned long long)off);
	else if (m->path[0] == '[')
		snprintf(buf, FALLBACK_LEN, "%.200s+0x%llx", m->path, (unsigned long long)ip);
	else
		snprintf(buf, FALLBACK_LEN, "%.256s+0x%llx",
			 (slash = strrchr(m->path, '/')) ? slash + 1 : m->path,
			 (unsigned long long)off);
}

/*
 * The record kept under @path and kind @kind (0 or 1: a file's data or
 * code; 2 or 3: a process's JIT code, without or with a perf map): found,
 * or added zeroed (*@added). NULL when out of memory: the frame is then not
 * counted, nothing else. A hash collision only makes two share a count.
 */
static struct unnamed_mod *unnamed_get(struct symbolizer *s, const char *path, unsigned int kind,
				       bool *added)
{
	size_t len = strlen(path);
	__u64 key = hmap__hash_bytes(path, len), key2 = len << 2 | kind;
	struct unnamed_mod *u = hmap__get(&s->unnamed, key, key2);
	void *old;

	*added = !u;
	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u || !(u->path = strdup(path)) || hmap__put(&s->unnamed, key, key2, u, &old)) {
		if (u)
			free(u->path);
		free(u);
		return NULL;
	}
	return u;
}

/* The record of the file at @m, whose code at some address has no name (or NULL). */
static struct unnamed_mod *unnamed_mod(struct symbolizer *s, const struct proc_map *m,
				       const struct sym_file *file)
{
	bool code = proc_map__is_exec(m), added;
	struct unnamed_mod *u = unnamed_get(s, m->path, code, &added);

	if (u && added) {
		/* a walk that strays into a file's data mapping: no symbol is missing there */
		u->not_code = !code;
		u->unreadable = code && !file;
		u->has_symtab = file && elfsyms__has_symtab(file->es);
	}
	return u;
}

/*
 * The record of the executable of @p (the file mapped where its newest maps
 * say its code starts: /proc/PID/stat's start_code), whose anonymous code
 * has no name (or NULL).
 */
static struct unnamed_mod *jit_mod(struct symbolizer *s, const struct proc *p)
{
	const struct proc_maps *maps = p->snaps ? &p->snaps->maps : NULL;
	bool mapped = p->jit && perfmap__is_open(p->jit), added;
	const char *exe = NULL;
	struct unnamed_mod *u;

	for (size_t i = 0; maps && i < maps->nr && !exe; i++) {
		const struct proc_map *m = &maps->maps[i];

		if (m->path && m->path[0] == '/' && m->start <= maps->start_code &&
		    maps->start_code < m->end)
			exe = m->path;
	}
	if (!exe)
		return NULL;
	/* a perf map that lacks them, or none: two records */
	u = unnamed_get(s, exe, mapped ? 3 : 2, &added);
	if (u && added) {
		u->jit = true;
		u->jit_mapped = mapped;
	}
	return u;
}

/* Append a name of kind @kind to the entry text at @text; the new length. */
static size_t add_name(char *text, size_t len, int kind, const char *name)
{
	size_t n = strnlen(name, MAX_NAME_LEN - 1);

	text[len] = kind;
	memcpy(text + len + 1, name, n);
	text[len + 1 + n] = '\0';
	return len + n + 2;
}

/*
 * The origin of @path with the build-id @id (@id_len bytes, 0: none), added
 * when new. NULL on ENOMEM: the frame then has no origin, nothing else.
 */
static const struct sym_origin *intern_origin(struct symbolizer *s, const char *path,
					      const unsigned char *id, size_t id_len)
{
	size_t plen = strlen(path), klen = plen + 1 + 2 * id_len;
	struct sym_origin *o = malloc(sizeof(*o) + klen + 1);
	char *key = (char *)(o + 1);
	__u64 idx = s->nr_origins;
	int ret;

	if (!o)
		return NULL;
	/* the key is the path and the build-id, each NUL-terminated */
	memcpy(key, path, plen + 1);
	for (size_t i = 0; i < id_len; i++)
		snprintf(key + plen + 1 + 2 * i, 3, "%02x", id[i]);
	key[klen] = '\0';
	o->path = key;
	o->build_id = key + plen + 1;
	if ((!s->origin_ids && !(s->origin_ids = strmap__new())) ||
	    array_reserve(&s->origins, &s->cap_origins, s->nr_origins, sizeof(*s->origins), 16)) {
		free(o);
		return NULL;
	}
	ret = strmap__intern(s->origin_ids, key, klen, idx, &idx);
	if (ret == 1) {
		s->origins[s->nr_origins++] = o;
		return o;
	}
	free(o);
	return ret == 0 ? s->origins[idx] : NULL;
}

/* The origin of a name found at @m in @file (either may be NULL) of kind @kind. */
static const struct sym_origin *origin_of(struct symbolizer *s, const struct proc_map *m,
					  const struct sym_file *file, int kind)
{
	const unsigned char *id = NULL;
	size_t id_len = 0;

	if (kind == KIND_JIT)
		return intern_origin(s, "[jit]", NULL, 0);
	if (!m || !m->path || !m->path[0])
		return NULL;
	if (file && file->es)
		id_len = elfsyms__build_id(file->es, &id);
	return intern_origin(s, m->path, id, id_len);
}

/* Name @ip of @pid (@p may be NULL): a new entry, or NULL on ENOMEM. */
static struct name_ent *resolve(struct symbolizer *s, struct proc *p, int pid, __u64 ip,
				bool inlines)
{
	const char *name = NULL, *inl[MAX_FRAMES_PER_IP - 1];
	char fallback[FALLBACK_LEN], text[MAX_FRAMES_PER_IP * (MAX_NAME_LEN + 1)];
	const struct proc_map *m = NULL;
	struct unnamed_mod *mod = NULL;
	struct sym_file *file = NULL;
	int ret = 0, kind = KIND_PLAIN, nr_inl = 0, i;
	struct name_ent *ent;
	size_t len;
	__u64 off = 0, addr;

	if (!p) {
		snprintf(fallback, sizeof(fallback), "[unknown-pid-%d]+0x%llx", pid,
			 (unsigned long long)ip);
		name = fallback;
		ret = 1;
		goto done;
	}
	m = proc__find(p, ip, &file);
	if (m)
		off = ip - m->start + m->pgoff;
	if (file) {
		if (!elfsyms__indexed(file->es))
			index_file(s, file, true);
		if (elfsyms__addr(file->es, off, proc_map__is_exec(m), &addr))
			name = elfsyms__find(file->es, addr);
		if (name && inlines)
			nr_inl = elfsyms__inlines(file->es, addr, inl, MAX_FRAMES_PER_IP - 1);
	}
	if (!name) {
		name = jit_find(s, p, pid, ip);
		kind = KIND_JIT;
	}
	if (!name) {
		fallback_name(m, ip, off, fallback);
		name = fallback;
		kind = KIND_PLAIN;
		ret = 1;
		/* code of a file: [vdso], [anon], [heap] and the like are no package's */
		if (m && m->path && m->path[0] == '/')
			mod = unnamed_mod(s, m, file);
		/* anonymous code: a JIT's, which its runtime can name in a perf map */
		else if (m && (!m->path || !m->path[0]) && proc_map__is_exec(m))
			mod = jit_mod(s, p);
	}
done:
	len = add_name(text, 0, kind, name);
	for (i = 0; i < nr_inl; i++)
		len = add_name(text, len, KIND_INLINE, inl[i]);
	ent = malloc(sizeof(*ent) + len);
	if (!ent)
		return NULL;
	ent->gen = p ? p->gen : 0;
	ent->ret = ret;
	ent->nr = 1 + nr_inl;
	ent->mod = mod;
	ent->origin = p ? origin_of(s, m, file, kind) : NULL;
	memcpy(ent->text, text, len);
	return ent;
}

/* The cached names of @ip, resolved if missing or stale. NULL on ENOMEM. */
static const struct name_ent *lookup(struct symbolizer *s, int pid, __u64 ip, bool inlines)
{
	struct proc *p = hmap__get(&s->procs, pid, 0);
	__u64 k1 = (__u32)pid | (__u64)inlines << 32;
	struct name_ent *ent = hmap__get(&s->names, k1, ip);
	void *old;

	if (ent && ent->gen == (p ? p->gen : 0))
		return ent;
	ent = resolve(s, p, pid, ip, inlines);
	if (!ent)
		return NULL;
	if (hmap__put(&s->names, k1, ip, ent, &old)) {
		/* Right, just not cached: kept until the next one like it. */
		free(s->uncached);
		s->uncached = ent;
		return ent;
	}
	free(old);
	return ent;
}

/* Copy @name with the suffix of @kind into @buf: a name truncated to fit keeps its suffix. */
static void put_name(char *buf, size_t size, int kind, const char *name)
{
	const char *sfx = kind_suffix[kind];
	size_t len = strlen(name), slen = strlen(sfx);

	if (len + slen < size || size <= slen + 1)
		snprintf(buf, size, "%s%s", name, sfx);
	else
		snprintf(buf, size, "%.*s%s", (int)(size - 1 - slen), name, sfx);
}

static void count_user(struct symbolizer *s, const struct name_ent *ent)
{
	if (s->quiet)
		return;
	if (ent->ret)
		s->stats.user_fallback++;
	else
		s->stats.user_named++;
	if (ent->text[0] == KIND_JIT)
		s->stats.user_jit++;
}

int symbolizer__user(struct symbolizer *s, int pid, __u64 ip, char *buf, size_t size)
{
	const struct name_ent *ent;

	if (!s || !buf || !size)
		return -EINVAL;
	ent = lookup(s, pid, ip, false);
	if (!ent)
		return -ENOMEM;
	put_name(buf, size, ent->text[0], ent->text + 1);
	count_user(s, ent);
	if (ent->mod && !s->quiet)
		ent->mod->frames++;
	return ent->ret;
}

int symbolizer__user_frames(struct symbolizer *s, int pid, __u64 ip, bool inlines,
			    char (*names)[SYMBOLIZER_NAME_LEN], int max_names)
{
	const struct name_ent *ent;
	const char *t;
	int i;

	if (!s || !names || max_names <= 0)
		return -EINVAL;
	ent = lookup(s, pid, ip, inlines);
	if (!ent)
		return -ENOMEM;
	for (i = 0, t = ent->text; i < ent->nr && i < max_names; i++, t += strlen(t + 1) + 2)
		put_name(names[i], SYMBOLIZER_NAME_LEN, t[0], t + 1);
	count_user(s, ent);
	if (!s->quiet)
		s->stats.user_inlined += i - 1;
	return i;
}

static void load_kallsyms(struct symbolizer *s)
{
	if (!s->ksyms_tried) {
		/* Failure (kptr_restrict) is remembered: every kernel frame then falls back. */
		s->ksyms = kallsyms__load(NULL);
		s->ksyms_tried = true;
	}
}

bool symbolizer__kernel_is_sched(struct symbolizer *s, __u64 ip)
{
	load_kallsyms(s);
	return kallsyms__is_sched(s->ksyms, ip);
}

int symbolizer__kernel(struct symbolizer *s, __u64 ip, char *buf, size_t size)
{
	const char *name;

	if (!s || !buf || !size)
		return -EINVAL;
	load_kallsyms(s);
	name = kallsyms__find(s->ksyms, ip, NULL);
	if (name) {
		snprintf(buf, size, "%s", name);
		s->stats.kernel_named += !s->quiet;
		return 0;
	}
	snprintf(buf, size, "[kernel]+0x%llx", (unsigned long long)ip);
	s->stats.kernel_fallback += !s->quiet;
	return 1;
}

const struct sym_origin *symbolizer__user_origin(struct symbolizer *s, int pid, __u64 ip)
{
	const struct name_ent *ent = s ? lookup(s, pid, ip, false) : NULL;

	return ent ? ent->origin : NULL;
}

/*
 * The kernel's GNU build-id from its ELF notes (/sys/kernel/notes): its
 * length, 0 when unreadable or absent.
 */
static size_t kernel_build_id(unsigned char *id, size_t size)
{
	unsigned char notes[4096];
	size_t off = 0, len;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, notes, sizeof(notes));

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	len = n;
	/* each note: namesz, descsz, type, then the name and the desc, each padded to 4 */
	while (len - off >= 12) {
		__u32 nh[3];
		size_t name_at, desc_at;

		memcpy(nh, notes + off, sizeof(nh));
		name_at = off + 12;
		if (nh[0] > len || nh[1] > len)
			return 0;
		desc_at = name_at + ((nh[0] + 3) & ~3u);
		if (desc_at > len || nh[1] > len - desc_at)
			return 0;
		if (nh[2] == 3 /* NT_GNU_BUILD_ID */ && nh[0] == 4 &&
		    !memcmp(notes + name_at, "GNU", 4) && nh[1] && nh[1] <= size) {
			memcpy(id, notes + desc_at, nh[1]);
			return nh[1];
		}
		off = desc_at + ((nh[1] + 3) & ~3u);
	}
	return 0;
}

const struct sym_origin *symbolizer__kernel_origin(struct symbolizer *s)
{
	unsigned char id[64];

	if (!s)
		return NULL;
	if (!s->kernel_origin)
		s->kernel_origin = intern_origin(s, "[kernel.kallsyms]", id,
						 kernel_build_id(id, sizeof(id)));
	return s->kernel_origin;
}

static int cmp_unnamed(const void *a, const void *b)
{
	const struct symbolizer_unnamed *x = a, *y = b;

	if (x->frames != y->frames)
		return x->frames > y->frames ? -1 : 1;
	return strcmp(x->path, y->path);
}

void symbolizer__quiet(struct symbolizer *s, bool quiet)
{
	if (s)
		s->quiet = quiet;
}

int symbolizer__unnamed(const struct symbolizer *s, struct symbolizer_unnamed **out)
{
	struct symbolizer_unnamed *u;
	size_t n = 0;

	*out = NULL;
	if (!s)
		return 0;
	u = calloc(s->unnamed.nr + 1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < s->unnamed.cap; i++) {
		const struct unnamed_mod *m = s->unnamed.slots[i].val;

		if (!m || !m->frames)
			continue;
		u[n++] = (struct symbolizer_unnamed){
			.path = m->path,
			.frames = m->frames,
			.has_symtab = m->has_symtab,
			.unreadable = m->unreadable,
			.not_code = m->not_code,
			.jit = m->jit,
			.jit_mapped = m->jit_mapped,
		};
	}
	qsort(u, n, sizeof(*u), cmp_unnamed);
	if (!n) {
		free(u);
		u = NULL;
	}
	*out = u;
	return n;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!s)
		return;
	*st = s->stats;
	/* refused when indexed, or later when its DWARF was first read */
	for (size_t i = 0; i < s->nr_files; i++) {
		const struct elfsyms *es = s->all_files[i]->es;
		const char *path;

		if (es && elfsyms__alt_refused(es, &path)) {
			st->alt_refused++;
			if (!st->alt_refused_path)
				st->alt_refused_path = path;
		}
		if (!es || !elfsyms__inflate_refused(es, &path))
			continue;
		st->inflate_refused++;
		if (!st->inflate_refused_path)
			st->inflate_refused_path = path;
	}
}

int symbolizer__set_debug_dirs(struct symbolizer *s, const char *dirs)
{
	const char *p;
	char *path;

	if (!s)
		return -EINVAL;
	if (!dirs || !dirs[0]) {
		path = strdup(DEFAULT_DEBUG_PATH);
	} else {
		/* libdw only searches absolute entries by build-id; relative ones mean "next to the file". */
		for (p = dirs; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL)
			if (*p != '/')
				return -EINVAL;
		if (asprintf(&path, ":.debug:%s:/usr/lib/debug", dirs) < 0)
			path = NULL;
	}
	if (!path)
		return -ENOMEM;
	free(s->debuginfo_path);
	s->debuginfo_path = path;
	return 0;
}

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	struct rlimit rl;

	if (!s)
		return NULL;
	s->debuginfo_path = strdup(DEFAULT_DEBUG_PATH);
	if (!s->debuginfo_path) {
		free(s);
		return NULL;
	}
	/*
	 * Files are indexed lazily and kept open for DWARF (inlined frames); a
	 * file with a separate debug file may take two fds. A quarter of the
	 * fd limit for all that leaves the rest of wprof plenty.
	 */
	s->fd_budget = 256;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		s->fd_budget = rl.rlim_cur / 4 > 16 ? rl.rlim_cur / 4 : 16;
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->procs.cap; i++)
		proc__free(s->procs.slots[i].val);
	for (i = 0; i < s->nr_files; i++) {
		elfsyms__free(s->all_files[i]->es);
		free(s->all_files[i]);
	}
	for (i = 0; i < s->names.cap; i++)
		free(s->names.slots[i].val);
	for (i = 0; i < s->unnamed.cap; i++) {
		struct unnamed_mod *u = s->unnamed.slots[i].val;

		if (u)
			free(u->path);
		free(u);
	}
	hmap__clear(&s->unnamed);
	for (i = 0; i < s->nr_origins; i++)
		free(s->origins[i]);
	free(s->origins);
	strmap__free(s->origin_ids);
	hmap__clear(&s->procs);
	free(s->live);
	hmap__clear(&s->files);
	hmap__clear(&s->build_ids);
	hmap__clear(&s->names);
	free(s->all_files);
	free(s->uncached);
	free(s->debuginfo_path);
	kallsyms__free(s->ksyms);
	free(s);
}
