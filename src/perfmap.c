// SPDX-License-Identifier: GPL-2.0-only
/*
 * The map is read incrementally: the runtime only appends, so each refresh
 * parses the bytes added since the last one, up to the last complete line
 * (the runtime may be in the middle of writing one). A file that shrank,
 * or changed without growing, is read again from the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "perfmap.h"

/* Past this many overlapping older entries, stop looking for a newer one that contains an address. */
#define MAX_LOOKBACK 256

struct pm_ent {
	__u64 start, end; /* [start, end) */
	__u32 seq;	  /* line number: a later line wins */
	__u32 name;	  /* offset in names */
};

struct perfmap {
	int pid, nspid;
	unsigned int euid;
	bool truncated; /* bigger than PERFMAP_MAX_BYTES: the rest is not read */
	bool host_ok; /* our /tmp/perf-PID.map is the process's file */
	int fd;	      /* -1 until opened */
	off_t off;    /* parsed up to here (a line start) */
	off_t size;   /* file size at the last refresh */
	struct timespec mtime;
	struct pm_ent *ents; /* sorted by start, then seq */
	size_t nr, cap;
	__u64 *max_end; /* max_end[i]: largest end among ents[0..i] */
	char *names;
	size_t names_len, names_cap;
	__u32 seq;
};

/* Effective uid and innermost pid (NSpid:) from /proc/PID/status. */
static int read_status(int pid, unsigned int *euid, int *nspid)
{
	char path[64], line[512];
	bool uid_seen = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	*nspid = pid; /* kernels without NSpid: no pid namespaces to care about */
	while (fgets(line, sizeof(line), f)) {
		unsigned int real;

		if (sscanf(line, "Uid: %u %u", &real, euid) == 2) {
			uid_seen = true;
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t') ? strrchr(line, '\t') : line + 6;

			*nspid = atoi(last + 1);
		}
	}
	fclose(f);
	return uid_seen && *nspid > 0 ? 0 : -EINVAL;
}

/* Do @a and @b name the same object? Unknown (not allowed to look) counts as yes. */
static bool same_inode(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return true;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

struct perfmap *perfmap__new(int pid)
{
	struct perfmap *pm;
	char path[64];
	int err;

	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->pid = pid;
	pm->fd = -1;
	err = read_status(pid, &pm->euid, &pm->nspid);
	if (err) {
		free(pm);
		errno = -err;
		return NULL;
	}
	/* After the process exited, its file can only be found through our own /tmp. */
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	pm->host_ok = pm->nspid == pid && same_inode(path, "/proc/self/ns/mnt");
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	pm->host_ok = pm->host_ok && same_inode(path, "/");
	return pm;
}

/*
 * @rel under the directory @dirfd taken as the root: symlinks in the
 * process's tree cannot lead out of it, and the file itself is no symlink.
 */
static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS) /* before Linux 5.6, or under valgrind */
		fd = openat(dirfd, rel, how.flags);
	return fd < 0 ? -errno : fd;
}

static int open_map(struct perfmap *pm)
{
	char path[96];
	struct stat st;
	int dirfd, fd = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/root", pm->pid);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0) {
		snprintf(path, sizeof(path), "tmp/perf-%d.map", pm->nspid);
		fd = open_beneath(dirfd, path);
		close(dirfd);
	}
	/* Gone, or its root is not ours to see: our /tmp, if it is the same. */
	if (dirfd < 0 && pm->host_ok) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", pm->pid);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		return fd == -ELOOP ? -EPERM : fd; /* ELOOP: the map is a symlink */
	/*
	 * Trusted when its content is the process's own: a file of the
	 * process's user that user can read (root's files only for a root
	 * process). A root-only file mounted there by a user namespace is not.
	 */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != pm->euid ||
	    !(st.st_mode & S_IRUSR)) {
		close(fd);
		return -EPERM;
	}
	pm->fd = fd;
	return 0;
}

static void reset(struct perfmap *pm)
{
	pm->nr = 0;
	pm->names_len = 0;
	pm->off = 0;
	pm->seq = 0;
}

static int add_entry(struct perfmap *pm, __u64 start, __u64 size, const char *name, size_t len)
{
	if (pm->nr == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 256;
		struct pm_ent *ents = realloc(pm->ents, cap * sizeof(*ents));

		if (!ents)
			return -ENOMEM;
		pm->ents = ents;
		pm->cap = cap;
	}
	if (pm->names_len + len + 1 > pm->names_cap) {
		size_t cap = pm->names_cap ? pm->names_cap * 2 : 4096;
		char *names;

		while (cap < pm->names_len + len + 1)
			cap *= 2;
		names = realloc(pm->names, cap);
		if (!names)
			return -ENOMEM;
		pm->names = names;
		pm->names_cap = cap;
	}
	pm->ents[pm->nr++] = (struct pm_ent){ start, start + size, pm->seq++, pm->names_len };
	memcpy(pm->names + pm->names_len, name, len);
	pm->names[pm->names_len + len] = '\0';
	pm->names_len += len + 1;
	return 0;
}

/* "START SIZE NAME": hex numbers, a single space each, the name up to the line's end. */
static int parse_line(struct perfmap *pm, char *line, size_t len)
{
	char *p = line, *end, *line_end = line + len;
	__u64 start, size;

	if (len && line_end[-1] == '\r')
		*--line_end = '\0';
	errno = 0;
	start = strtoull(p, &end, 16);
	if (errno || end == p || *end != ' ')
		return 0; /* not a map line: skipped, as perf does */
	p = end + 1;
	size = strtoull(p, &end, 16);
	if (errno || end == p || *end != ' ' || !size || start + size < start || end + 1 == line_end)
		return 0;
	return add_entry(pm, start, size, end + 1, line_end - (end + 1));
}

static int ent_cmp(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_index(struct perfmap *pm)
{
	__u64 *max_end = realloc(pm->max_end, (pm->nr ? pm->nr : 1) * sizeof(*max_end));
	size_t i;

	if (!max_end)
		return -ENOMEM;
	pm->max_end = max_end;
	if (pm->nr) /* qsort(NULL, 0) is undefined */
		qsort(pm->ents, pm->nr, sizeof(*pm->ents), ent_cmp);
	for (i = 0; i < pm->nr; i++)
		max_end[i] = i && max_end[i - 1] > pm->ents[i].end ? max_end[i - 1] : pm->ents[i].end;
	return 0;
}

int perfmap__refresh(struct perfmap *pm)
{
	char *buf, *line, *nl;
	struct stat st;
	bool changed = false;
	size_t len;
	ssize_t n;
	int err;

	if (pm->fd < 0) {
		err = open_map(pm);
		if (err)
			return err;
		reset(pm);
	}
	if (fstat(pm->fd, &st))
		return -errno;
	if (st.st_size == pm->size && st.st_mtim.tv_sec == pm->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == pm->mtime.tv_nsec)
		return 0;
	if (st.st_size < pm->off || st.st_size == pm->size) {
		changed = pm->nr > 0;
		reset(pm); /* rewritten, not appended to */
	}
	pm->size = st.st_size;
	pm->mtime = st.st_mtim;
	if (st.st_size == pm->off)
		goto index;
	/* a map is text a runtime appends to; past this much it is not one worth trusting */
	if (st.st_size > PERFMAP_MAX_BYTES) {
		pm->truncated = true;
		if (pm->off >= PERFMAP_MAX_BYTES)
			goto index;
	}
	len = (st.st_size > PERFMAP_MAX_BYTES ? PERFMAP_MAX_BYTES : st.st_size) - pm->off;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	n = pread(pm->fd, buf, len, pm->off);
	if (n < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	buf[n] = '\0';
	/* Complete lines only: the runtime may be writing the last one. */
	for (line = buf; (nl = memchr(line, '\n', buf + n - line)); line = nl + 1) {
		*nl = '\0';
		err = parse_line(pm, line, nl - line);
		if (err) {
			free(buf);
			return err;
		}
		changed = true;
	}
	pm->off += line - buf;
	free(buf);
index:
	err = build_index(pm);
	if (err)
		return err;
	return changed;
}

bool perfmap__truncated(const struct perfmap *pm)
{
	return pm && pm->truncated;
}

const char *perfmap__find(const struct perfmap *pm, __u64 addr)
{
	size_t lo = 0, hi = pm ? pm->nr : 0, i, steps;
	const struct pm_ent *best = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->ents[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries may overlap (reused code memory): the newest that contains addr. */
	for (i = lo, steps = 0; i > 0 && pm->max_end[i - 1] > addr && steps < MAX_LOOKBACK;
	     i--, steps++) {
		const struct pm_ent *e = &pm->ents[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best ? pm->names + best->name : NULL;
}

bool perfmap__is_open(const struct perfmap *pm)
{
	return pm->fd >= 0;
}

__u64 perfmap__count(const struct perfmap *pm)
{
	return pm ? pm->nr : 0;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	if (pm->fd >= 0)
		close(pm->fd);
	free(pm->ents);
	free(pm->max_end);
	free(pm->names);
	free(pm);
}
