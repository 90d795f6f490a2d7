/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The -o file, written safely by a root tool in directories others can
 * write to: a regular file is written to a new temporary file beside it and
 * renamed over it only when everything was written, so a failed run leaves
 * the old file as it was; a symlink or a file that belongs to another user
 * (other than root) is refused, never followed or clobbered; a device or a
 * FIFO (/dev/null, /dev/stdout) is written directly.
 */
#ifndef WPROF_OUTFILE_H
#define WPROF_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;
	char *path; /* the name to give the result */
	char *tmp;  /* the temporary file, or NULL when writing directly */
};

/* Prints one error line and returns -errno when @path cannot be written. */
int outfile__open(const char *path, struct outfile *out);
/* Flush, and put the file in place. Prints one error line on failure; 0 or -errno. */
int outfile__commit(struct outfile *out);
/* Remove what was written (the old file stays). NULL members ok. */
void outfile__abort(struct outfile *out);

#endif /* WPROF_OUTFILE_H */
