// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "util.h"

static int fail(const char *path, int err, const char *what)
{
	pr_err("cannot write output file %s: %s", path, what ? what : strerror(-err));
	return err;
}

static mode_t current_umask(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

/* Write straight to a device or FIFO: there is nothing to replace. */
static int open_direct(const char *path, struct outfile *out)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	out->path = strdup(path);
	if (fd < 0 || !out->path) {
		int err = fd < 0 ? -errno : -ENOMEM;

		if (fd >= 0)
			close(fd);
		outfile__abort(out);
		return fail(path, err, NULL);
	}
	out->f = fdopen(fd, "w");
	if (!out->f) {
		int err = -errno;

		close(fd);
		outfile__abort(out);
		return fail(path, err, NULL);
	}
	return 0;
}

int outfile__open(const char *path, struct outfile *out)
{
	struct stat st;
	char *dir = NULL;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
			return fail(path, -EPERM, "it is a symbolic link of another user; remove it "
						  "or pass another name");
		if (stat(path, &st))
			return fail(path, -errno, NULL);
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			return open_direct(path, out);
		if (!S_ISREG(st.st_mode))
			return fail(path, -EINVAL, "not a regular file");
		if (st.st_uid != geteuid() && st.st_uid != 0)
			return fail(path, -EPERM, "it belongs to another user; remove it or pass "
						  "another name");
		/* the name to replace is the file a (trusted) symlink points to */
		out->path = realpath(path, NULL);
	} else if (errno != ENOENT) {
		return fail(path, -errno, NULL);
	} else {
		out->path = strdup(path);
	}
	dir = out->path ? strdup(out->path) : NULL;
	if (!dir || asprintf(&out->tmp, "%s/.wprof-XXXXXX", dirname(dir)) < 0) {
		out->tmp = NULL;
		free(dir);
		outfile__abort(out);
		return fail(path, -ENOMEM, NULL);
	}
	free(dir);
	/* a new file of our own, O_EXCL: nothing anybody placed there is followed */
	fd = mkostemp(out->tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(out->tmp);
		out->tmp = NULL;
		outfile__abort(out);
		return fail(path, err, NULL);
	}
	if (fchmod(fd, 0666 & ~current_umask()) || !(out->f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		outfile__abort(out);
		return fail(path, err, NULL);
	}
	return 0;
}

int outfile__commit(struct outfile *out)
{
	int err = 0;

	if (fflush(out->f) || ferror(out->f))
		err = errno ? -errno : -EIO;
	if (fclose(out->f) && !err)
		err = errno ? -errno : -EIO;
	out->f = NULL;
	if (!err && out->tmp && rename(out->tmp, out->path))
		err = -errno;
	if (err) {
		fail(out->path ? out->path : "?", err, NULL);
		outfile__abort(out);
		return err;
	}
	free(out->tmp);
	free(out->path);
	out->tmp = out->path = NULL;
	return 0;
}

void outfile__abort(struct outfile *out)
{
	if (out->f)
		fclose(out->f);
	if (out->tmp)
		unlink(out->tmp);
	free(out->tmp);
	free(out->path);
	memset(out, 0, sizeof(*out));
}
