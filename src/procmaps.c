// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/maps lines look like
 *
 *	55d0c8a00000-55d0c8a21000 r-xp 00001000 fe:01 1837  /usr/bin/my prog (deleted)
 *
 * The path is everything after the inode and the padding, so it may contain
 * spaces; the kernel escapes newlines in it, so one line is one mapping.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "procmaps.h"
#include "util.h"

#define DELETED_SUFFIX " (deleted)"
#define VDSO_MAX_SIZE (1U << 20)

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

/*
 * Open @path (relative to @dirfd, resolved with the openat2() @resolve
 * flags) if it is a regular file. It is looked at through an O_PATH fd
 * first: opening a FIFO or a device has effects.
 */
static int open_regular_at(int dirfd, const char *path, __u64 resolve, struct stat *st)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = resolve };
	char self[64];
	int pfd, fd, err;

	pfd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	/* Before Linux 5.6 (or under valgrind): an absolute path made relative to @dirfd. */
	if (pfd < 0 && errno == ENOSYS)
		pfd = openat(dirfd, dirfd == AT_FDCWD ? path : path + strspn(path, "/"),
			     O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) || !S_ISREG(st->st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	return err ? err : fd;
}

static int open_regular(const char *path, struct stat *st)
{
	return open_regular_at(AT_FDCWD, path, 0, st);
}

/*
 * @path in the mount namespace and root of @pid. Resolved in its root:
 * a symlink in a container cannot make us read a file of the host.
 */
static int open_in_root(int pid, const char *path, struct stat *st)
{
	char root[64];
	int dirfd, fd;

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = open_regular_at(dirfd, path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, st);
	close(dirfd);
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
	fd = open_in_root(pid, m->path, &st);
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

/* Fields 22 (start time), 26 (start of the code) and 28 (of the stack) of /proc/PID/stat. */
static int read_stat(int pid, __u64 *start_time, __u64 *start_code, __u64 *start_stack)
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
	for (; field < 26 && p; field++)
		p = strchr(p + 1, ' ');
	*start_code = p ? strtoull(p + 1, NULL, 10) : 0;
	for (; field < 28 && p; field++)
		p = strchr(p + 1, ' ');
	*start_stack = p ? strtoull(p + 1, NULL, 10) : 0;
	return 0;
}

int procmaps__start_time(int pid, __u64 *start_time)
{
	__u64 start_code, start_stack;

	return read_stat(pid, start_time, &start_code, &start_stack);
}

/* Tries at maps read between two reads of /proc/PID/stat that agree */
#define READ_TRIES 3

int procmaps__read_proc(int pid, __u64 *start_time, struct proc_maps *out)
{
	__u64 time2, code2, stack2;
	int err = 0;

	out->maps = NULL;
	out->nr = 0;
	/*
	 * An exec between the stat and the maps would pair one program's
	 * start of stack with the next one's maps: read both until the stat
	 * around the maps is the same
	 */
	for (int i = 0; i < READ_TRIES; i++) {
		procmaps__free(out);
		err = read_stat(pid, start_time, &out->start_code, &out->start_stack);
		if (!err)
			err = procmaps__read(pid, out);
		if (!err)
			err = read_stat(pid, &time2, &code2, &stack2);
		if (err || (time2 == *start_time && stack2 == out->start_stack))
			break;
		err = -EAGAIN;
	}
	if (err)
		procmaps__free(out);
	else
		out->read_ns = now_ns();
	return err;
}

bool procmaps__counts_as_exec(const struct proc_map *m)
{
	return m->perms[2] == 'x' && m->perms[1] != 'w' &&
	       !(m->path && !strcmp(m->path, "[vsyscall]"));
}

__u64 procmaps__exec_pages(const struct proc_maps *maps)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 pages = 0;

	for (size_t i = 0; i < maps->nr; i++)
		if (procmaps__counts_as_exec(&maps->maps[i]))
			pages += (maps->maps[i].end - maps->maps[i].start) / (page > 0 ? page : 4096);
	return pages;
}

/* PROCMAP_QUERY of Linux 6.11's <linux/fs.h>, which older headers lack */
struct wprof_procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#define WPROF_PROCMAP_QUERY _IOWR('f', 17, struct wprof_procmap_query)
#define WPROF_PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define WPROF_PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10

int procmaps__code_maps(int pid, struct code_map **out, size_t *nr)
{
	struct wprof_procmap_query q;
	struct code_map *maps = NULL;
	size_t n = 0, cap = 0;
	__u64 addr = 0;
	char path[64];
	int fd, err = 0;

	*out = NULL;
	*nr = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = WPROF_PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
				WPROF_PROCMAP_QUERY_VMA_EXECUTABLE;
		q.query_addr = addr;
		if (ioctl(fd, WPROF_PROCMAP_QUERY, &q)) {
			/* ENOENT: no executable mapping at or after addr */
			err = errno == ENOENT ? 0 : errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP :
			      -errno;
			break;
		}
		if (q.vma_end <= addr) { /* never expected: do not loop */
			err = -EINVAL;
			break;
		}
		if (n == cap) {
			struct code_map *m = realloc(maps, (cap ? 2 * cap : 16) * sizeof(*m));

			if (!m) {
				err = -ENOMEM;
				break;
			}
			maps = m;
			cap = cap ? 2 * cap : 16;
		}
		memset(&maps[n], 0, sizeof(maps[n]));
		maps[n].start = q.vma_start;
		maps[n].end = q.vma_end;
		maps[n].pgoff = q.vma_offset;
		maps[n].inode = q.inode;
		maps[n].dev_major = q.dev_major;
		maps[n].dev_minor = q.dev_minor;
		maps[n].flags = q.vma_flags;
		n++;
		addr = q.vma_end;
	}
	close(fd);
	if (err) {
		free(maps);
		return err;
	}
	*out = maps;
	*nr = n;
	return 0;
}

void *procmaps__copy_vdso(int pid, const struct proc_map *m, size_t *len)
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

int procmaps__interp_base(int pid, __u64 *base)
{
	char path[64];
	__u64 auxv[2 * 64 + 1]; /* a word more: read_small_file() ends what it read with a NUL */
	int n;

	*base = 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	n = read_small_file(path, (char *)auxv, sizeof(auxv));
	if (n < 0)
		return n;
	for (size_t i = 0; i + 1 < (size_t)n / sizeof(auxv[0]) && auxv[i] != AT_NULL; i += 2)
		if (auxv[i] == AT_BASE)
			*base = auxv[i + 1];
	return 0;
}

static bool maps_same_file(const struct proc_map *a, const struct proc_map *b)
{
	return a->inode && a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

int procmaps__at_exec(const struct proc_maps *maps, __u64 interp_base, struct proc_maps *out)
{
	const struct proc_map *prog = procmaps__find(maps, maps->start_code);
	const struct proc_map *interp = interp_base ? procmaps__find(maps, interp_base) : NULL;

	*out = *maps;
	out->maps = NULL;
	out->nr = 0;
	if (!prog || !prog->inode)
		return -ENOENT;
	out->maps = calloc(maps->nr, sizeof(*out->maps));
	if (!out->maps)
		return -ENOMEM;
	for (size_t i = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];
		struct proc_map *o = &out->maps[out->nr];

		if (!maps_same_file(m, prog) && !(interp && maps_same_file(m, interp)) &&
		    !(m->path && !strcmp(m->path, "[vdso]")))
			continue;
		*o = *m;
		if (m->path && !(o->path = strdup(m->path))) {
			procmaps__free(out);
			return -ENOMEM;
		}
		out->nr++;
	}
	return 0;
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
