// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/maps lines look like
 *
 *	55d0c8a00000-55d0c8a21000 r-xp 00001000 fe:01 1837  /usr/bin/my prog (deleted)
 *
 * The path is everything after the inode and the padding, so it may contain
 * spaces; the kernel escapes newlines in it, so one line is one mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "procmaps.h"

#define DELETED_SUFFIX " (deleted)"

/* Parse hex digits at *p up to @term; advances *p past @term. */
static int parse_hex(const char **p, __u64 *v, char term)
{
	const char *s = *p;
	__u64 x = 0;
	int digits = 0;

	for (; *s && *s != term; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -EINVAL;
		if (x >> 60)
			return -EINVAL; /* would overflow 64 bits */
		x = x << 4 | d;
	}
	if (!digits || *s != term)
		return -EINVAL;
	*v = x;
	*p = s + 1;
	return 0;
}

static int parse_dec(const char **p, __u64 *v)
{
	const char *s = *p;
	__u64 x = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (~0ULL - 9) / 10)
			return -EINVAL;
		x = x * 10 + (*s - '0');
	}
	*v = x;
	*p = s;
	return 0;
}

static int parse_perms(const char **p, char perms[5])
{
	static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
	const char *s = *p;
	int i;

	for (i = 0; i < 4; i++) {
		if (!s[i] || !strchr(allowed[i], s[i]))
			return -EINVAL;
		perms[i] = s[i];
	}
	perms[4] = '\0';
	if (s[4] != ' ')
		return -EINVAL;
	*p = s + 5;
	return 0;
}

/* Parse one line (without its newline) into @m; m->path is malloc'd or NULL. */
static int parse_line(const char *s, struct proc_map *m)
{
	__u64 major, minor;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (parse_hex(&s, &m->start, '-') || parse_hex(&s, &m->end, ' ') ||
	    parse_perms(&s, m->perms) || parse_hex(&s, &m->pgoff, ' ') ||
	    parse_hex(&s, &major, ':') || parse_hex(&s, &minor, ' ') || parse_dec(&s, &m->inode))
		return -EINVAL;
	if (m->start >= m->end || major > 0xffffffffULL || minor > 0xffffffffULL)
		return -EINVAL;
	if (*s && *s != ' ')
		return -EINVAL; /* junk glued to the inode */
	m->dev_major = major;
	m->dev_minor = minor;

	while (*s == ' ' || *s == '\t')
		s++;
	len = strlen(s);
	if (!len)
		return 0;
	if (len > strlen(DELETED_SUFFIX) &&
	    !strcmp(s + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		len -= strlen(DELETED_SUFFIX);
		m->deleted = true;
	}
	m->path = strndup(s, len);
	return m->path ? 0 : -ENOMEM;
}

static int map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps__parse(FILE *f, struct proc_maps *out)
{
	struct proc_map *maps = NULL, *tmp;
	size_t nr = 0, cap = 0, linecap = 0, i;
	char *line = NULL;
	bool sorted = true;
	ssize_t len;
	int err = 0;

	out->maps = NULL;
	out->nr = 0;
	errno = 0;
	while ((len = getline(&line, &linecap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(maps, cap * sizeof(*maps));
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			maps = tmp;
		}
		err = parse_line(line, &maps[nr]);
		if (err)
			goto cleanup;
		if (nr && maps[nr].start < maps[nr - 1].start)
			sorted = false;
		nr++;
	}
	if (ferror(f)) {
		err = errno ? -errno : -EIO;
		goto cleanup;
	}
	/* The kernel prints them sorted; binary search needs that to hold for any input. */
	if (!sorted)
		qsort(maps, nr, sizeof(*maps), map_cmp);
	out->maps = maps;
	out->nr = nr;
	maps = NULL;
	nr = 0;
cleanup:
	for (i = 0; i < nr; i++)
		free(maps[i].path);
	free(maps);
	free(line);
	return err;
}

int procmaps__read(int pid, struct proc_maps *out)
{
	char path[64];
	FILE *f;
	int err;

	out->maps = NULL;
	out->nr = 0;
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	err = procmaps__parse(f, out);
	fclose(f);
	/* A process that exits while we read makes the read fail with ESRCH. */
	return err == -ENOENT ? -ESRCH : err;
}

const struct proc_map *procmaps__find(const struct proc_maps *m, __u64 addr)
{
	size_t lo = 0, hi = m ? m->nr : 0;

	/* Find the last mapping that starts at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->maps[lo - 1].end)
		return NULL;
	return &m->maps[lo - 1];
}

static bool same_file(const struct stat *st, const struct proc_map *m)
{
	return st->st_ino == m->inode && major(st->st_dev) == m->dev_major &&
	       minor(st->st_dev) == m->dev_minor;
}

/* Open @path if it is a regular file (never a FIFO or a device: opening those has effects). */
static int open_regular(const char *path, struct stat *st)
{
	int fd;

	if (stat(path, st))
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int procmaps__open_file(int pid, const struct proc_map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd, err;

	if (!m->path || !m->path[0] || m->path[0] == '[')
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open_regular(path, &st);
	if (fd >= 0)
		return fd;
	if (m->path[0] != '/')
		return fd; /* "anon_inode:..." and the like have no other name */
	/*
	 * A deleted file's path may name a newer file now: check the inode.
	 * Not otherwise, as overlayfs shows other inode numbers than the maps.
	 */
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
	fd = open_regular(path, &st);
	if (fd >= 0 && (!m->deleted || st.st_ino == m->inode))
		return fd;
	if (fd >= 0)
		close(fd);
	/* Our own view of the path (the process may be gone): only the very same file. */
	fd = open_regular(m->path, &st);
	if (fd >= 0 && same_file(&st, m))
		return fd;
	err = fd >= 0 ? -ESTALE : fd;
	if (fd >= 0)
		close(fd);
	return err;
}

int procmaps__read_mem(int pid, __u64 addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = pread(fd, buf, len, addr);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	return (size_t)n == len ? 0 : -EIO;
}

void procmaps__free(struct proc_maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++)
		free(m->maps[i].path);
	free(m->maps);
	m->maps = NULL;
	m->nr = 0;
}
