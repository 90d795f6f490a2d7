// SPDX-License-Identifier: GPL-2.0-only
/*
 * FILE is resolved one name at a time, each from the directory before it,
 * held open: a check and the step that relies on it act on the same
 * directory or file, never on a path another user can change in between.
 * The rules are in outfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "outfile.h"
#include "util.h"

/* symbolic links one path may go through, as many as the kernel follows */
#define MAX_LINKS 40

/* A path being resolved: where it has got to, and what is left. */
struct walk {
	const char *path; /* as given, for messages */
	char buf[PATH_MAX]; /* the path, each link followed replaced by its target */
	size_t at; /* where the next name starts in buf */
	int dir; /* the directory resolved so far (O_PATH) */
	int nr_links;
	char name[NAME_MAX + 1]; /* the name being looked at; at the end, the last */
	/* the end: what has the last name (-1: nothing), and its stat */
	int fd;
	struct stat st;
	bool by_proc; /* reached through a link of /proc: one of our descriptors */
	bool want_set; /* a link of /proc to a regular file: the file its text must lead to */
	dev_t want_dev;
	ino_t want_ino;
};

static int fail(const char *path, int err, const char *what)
{
	pr_err("cannot write output file %s: %s", path, what ? what : strerror(-err));
	return err;
}

/* The name ending at @end of buf is the trouble: say which (@what starts with a verb). */
static int walk__fail(const struct walk *w, size_t end, int err, const char *what)
{
	bool whole = !strncmp(w->buf, w->path, end) && !w->path[end];

	if (whole)
		pr_err("cannot write output file %s: %s%s", w->path, what ? "it " : "",
		       what ? what : strerror(-err));
	else
		pr_err("cannot write output file %s: %.*s%s%s", w->path, (int)end, w->buf,
		       what ? " " : ": ", what ? what : strerror(-err));
	return err;
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * A link is followed only where nobody else could have put it: it is root's
 * or ours, it has no other name (where fs.protected_hardlinks is 0, anyone
 * can give root's links a name in their own directory), and its directory
 * is root's or ours and writable by nobody else, or sticky (only the owner
 * of an entry or of the directory can rename or remove it there).
 */
static int walk__check_link(const struct walk *w, size_t end, const struct stat *st)
{
	struct stat dir;

	if (!trusted_owner(st->st_uid))
		return walk__fail(w, end, -EPERM, "is a symbolic link of another user; remove it "
						  "or pass another name");
	if (st->st_nlink != 1)
		return walk__fail(w, end, -EPERM, "is a symbolic link with more than one name "
						  "(hard links); pass the name it points to");
	if (fstat(w->dir, &dir))
		return walk__fail(w, end, -errno, NULL);
	if (!trusted_owner(dir.st_uid) ||
	    ((dir.st_mode & (S_IWGRP | S_IWOTH)) && !(dir.st_mode & S_ISVTX)))
		return walk__fail(w, end, -EPERM, "is a symbolic link in a directory other users "
						  "can change; pass the name it points to");
	return 0;
}

static void walk__set_dir(struct walk *w, int fd)
{
	close(w->dir);
	w->dir = fd;
}

/*
 * A link of /proc, followed by the kernel: its target is a directory, one
 * of our descriptors or a process's, whose text may be no path at all
 * ("pipe:[42]" for /proc/self/fd/1). Returns 1 when the link's text is to
 * be followed instead: a regular file, to be replaced in its directory.
 */
static int walk__proc_link(struct walk *w, size_t end, bool last)
{
	struct stat st;
	int fd = openat(w->dir, w->name, O_PATH | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return walk__fail(w, end, err, NULL);
	}
	if (!last) {
		if (S_ISDIR(st.st_mode)) {
			walk__set_dir(w, fd);
			return 0;
		}
		close(fd);
		return walk__fail(w, end, -ENOTDIR, NULL);
	}
	if (S_ISREG(st.st_mode)) {
		close(fd);
		w->want_set = true;
		w->want_dev = st.st_dev;
		w->want_ino = st.st_ino;
		return 1;
	}
	w->fd = fd;
	w->st = st;
	w->by_proc = true;
	return 0;
}

/*
 * Follow the link @lfd (@st), w->name, ending at @end of buf; @last: the
 * path's last name. Its text, read from the link that was checked, takes
 * its place in buf, and the walk goes on from there.
 */
static int walk__follow(struct walk *w, size_t end, int lfd, const struct stat *st, bool last)
{
	char target[PATH_MAX];
	const char *rest = w->buf + end;
	struct statfs fs;
	size_t rest_len = strlen(rest);
	ssize_t n;
	int err;

	err = walk__check_link(w, end, st);
	if (err)
		return err;
	if (++w->nr_links > MAX_LINKS)
		return fail(w->path, -ELOOP, NULL);
	if (!fstatfs(w->dir, &fs) && fs.f_type == PROC_SUPER_MAGIC) {
		err = walk__proc_link(w, end, last);
		if (err <= 0)
			return err;
	}
	n = readlinkat(lfd, "", target, sizeof(target));
	if (n <= 0)
		return walk__fail(w, end, n ? -errno : -ENOENT, NULL);
	if ((size_t)n + rest_len >= sizeof(target))
		return walk__fail(w, end, -ENAMETOOLONG, NULL);
	memcpy(target + n, rest, rest_len + 1);
	memcpy(w->buf, target, n + rest_len + 1);
	w->at = 0;
	if (target[0] == '/') {
		int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return walk__fail(w, end, -errno, NULL);
		walk__set_dir(w, fd);
	}
	return 0;
}

/* One name on the way: it must be a directory, or a link to one. */
static int walk__step(struct walk *w, size_t end)
{
	struct stat st;
	int fd, err;

	if (!strcmp(w->name, "."))
		return 0;
	/* O_DIRECTORY: an automount point is mounted, as for any lookup */
	fd = openat(w->dir, w->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		walk__set_dir(w, fd);
		return 0;
	}
	if (errno != ENOTDIR)
		return walk__fail(w, end, -errno, NULL);
	fd = openat(w->dir, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return walk__fail(w, end, -errno, NULL);
	if (fstat(fd, &st))
		err = walk__fail(w, end, -errno, NULL);
	else if (!S_ISLNK(st.st_mode))
		err = walk__fail(w, end, -ENOTDIR, NULL);
	else
		err = walk__follow(w, end, fd, &st, false);
	close(fd);
	return err;
}

/* The last name: 0 when resolved (w->fd, -1 if nothing has it), 1 to go on with a link's text. */
static int walk__last(struct walk *w, size_t end)
{
	struct stat st;
	int fd, err;

	if (!w->name[0] || !strcmp(w->name, ".") || !strcmp(w->name, ".."))
		return walk__fail(w, end, -EISDIR, NULL);
	fd = openat(w->dir, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : walk__fail(w, end, -errno, NULL);
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return walk__fail(w, end, err, NULL);
	}
	if (!S_ISLNK(st.st_mode)) {
		w->fd = fd;
		w->st = st;
		return 0;
	}
	err = walk__follow(w, end, fd, &st, true);
	close(fd);
	if (err)
		return err;
	return w->fd >= 0 ? 0 : 1;
}

/* Resolve w->path from / or the working directory; prints one line on failure. */
static int walk__run(struct walk *w)
{
	size_t len = strlen(w->path);

	if (!len)
		return fail(w->path, -ENOENT, NULL);
	if (len >= sizeof(w->buf))
		return fail(w->path, -ENAMETOOLONG, NULL);
	memcpy(w->buf, w->path, len + 1);
	w->dir = open(w->path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dir < 0)
		return fail(w->path, -errno, NULL);
	for (;;) {
		const char *name, *slash;
		size_t end;
		int err;

		while (w->buf[w->at] == '/')
			w->at++;
		name = w->buf + w->at;
		slash = strchr(name, '/');
		len = slash ? (size_t)(slash - name) : strlen(name);
		end = w->at + len;
		if (len > NAME_MAX)
			return walk__fail(w, end, -ENAMETOOLONG, NULL);
		memcpy(w->name, name, len);
		w->name[len] = '\0';
		w->at = end;
		err = slash ? walk__step(w, end) : walk__last(w, end);
		if (err < 0 || (!slash && !err))
			return err;
	}
}

/* A new file of ours beside the one to replace: O_EXCL, nothing anybody put there is opened. */
static int open_tmp(struct walk *w, struct outfile *out)
{
	char tmp[32];
	int fd = -1, err = -EEXIST;

	out->name = strdup(w->name);
	out->path = strdup(w->path);
	if (!out->name || !out->path) {
		err = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < 100 && fd < 0; i++) {
		uint64_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r)) {
			err = -errno;
			goto fail;
		}
		snprintf(tmp, sizeof(tmp), ".wprof-%012" PRIx64, r & UINT64_C(0xffffffffffff));
		fd = openat(w->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST) {
			err = -errno;
			goto fail;
		}
	}
	if (fd < 0)
		goto fail;
	out->f = fdopen(fd, "w");
	out->tmp = out->f ? strdup(tmp) : NULL;
	if (!out->tmp) {
		err = out->f ? -ENOMEM : -errno;
		if (!out->f)
			close(fd);
		unlinkat(w->dir, tmp, 0);
		goto fail;
	}
	/* from here on, tmp is set and dir open: outfile__abort removes the file */
	out->dir = w->dir;
	w->dir = -1;
	return 0;
fail:
	outfile__abort(out);
	return fail(w->path, err, NULL);
}

/* A device or a FIFO: opened for writing from what was checked, not by its name again. */
static int open_direct(const struct walk *w, struct outfile *out)
{
	char proc[32];
	struct stat st;
	int fd, err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w->fd);
	fd = open(proc, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail(w->path, -errno, errno == ENOENT ? "/proc is not mounted (needed to "
							       "write to a device or FIFO)" : NULL);
	if (fstat(fd, &st) || st.st_dev != w->st.st_dev || st.st_ino != w->st.st_ino) {
		close(fd);
		return fail(w->path, -EAGAIN, "it changed while it was opened");
	}
	out->path = strdup(w->path);
	out->f = out->path ? fdopen(fd, "w") : NULL;
	if (!out->f) {
		err = out->path ? -errno : -ENOMEM;
		close(fd);
		outfile__abort(out);
		return fail(w->path, err, NULL);
	}
	return 0;
}

static int open_target(struct walk *w, struct outfile *out)
{
	const struct stat *st = &w->st;

	if (w->want_set && (w->fd < 0 || st->st_dev != w->want_dev || st->st_ino != w->want_ino))
		return fail(w->path, -ENOENT, "the file it names was moved or deleted");
	if (w->fd < 0)
		return open_tmp(w, out);
	if (S_ISREG(st->st_mode)) {
		if (!trusted_owner(st->st_uid))
			return fail(w->path, -EPERM, "it belongs to another user; remove it or pass "
						     "another name");
		return open_tmp(w, out);
	}
	/* another user's FIFO would hand them what root writes; /dev/stdout's was given to us */
	if (S_ISFIFO(st->st_mode) && !w->by_proc && !trusted_owner(st->st_uid))
		return fail(w->path, -EPERM, "it is a FIFO of another user; remove it or pass "
					     "another name");
	if (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode))
		return open_direct(w, out);
	if (S_ISDIR(st->st_mode))
		return fail(w->path, -EISDIR, NULL);
	return fail(w->path, -EINVAL, "not a regular file");
}

int outfile__open(const char *path, struct outfile *out)
{
	struct walk *w = calloc(1, sizeof(*w));
	int err;

	memset(out, 0, sizeof(*out));
	if (!w)
		return fail(path, -ENOMEM, NULL);
	w->path = path;
	w->dir = -1;
	w->fd = -1;
	err = walk__run(w);
	if (!err)
		err = open_target(w, out);
	if (w->fd >= 0)
		close(w->fd);
	if (w->dir >= 0)
		close(w->dir);
	free(w);
	return err;
}

int outfile__commit(struct outfile *out)
{
	int err = 0;

	if (fflush(out->f) || ferror(out->f))
		err = errno ? -errno : -EIO;
	if (fclose(out->f) && !err)
		err = errno ? -errno : -EIO;
	out->f = NULL;
	/*
	 * Replaces the name, whatever has it now (in a directory others can
	 * write to, what they put there since the checks): nothing is written
	 * through it, and the output is not lost to it.
	 */
	if (!err && out->tmp && renameat(out->dir, out->tmp, out->dir, out->name))
		err = -errno;
	if (err) {
		fail(out->path ? out->path : "?", err, NULL);
		outfile__abort(out);
		return err;
	}
	if (out->tmp)
		close(out->dir);
	free(out->tmp);
	free(out->name);
	free(out->path);
	memset(out, 0, sizeof(*out));
	return 0;
}

void outfile__abort(struct outfile *out)
{
	if (out->f)
		fclose(out->f);
	if (out->tmp) {
		unlinkat(out->dir, out->tmp, 0);
		close(out->dir);
	}
	free(out->tmp);
	free(out->name);
	free(out->path);
	memset(out, 0, sizeof(*out));
}
