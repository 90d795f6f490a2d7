/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The -o file, written safely by a root tool in directories others can
 * write to. FILE is resolved one name at a time from / (or the working
 * directory), each directory held open, so that no check can be made on one
 * file and the write land on another:
 * - a symbolic link on the way, or as the last name, is followed only when
 *   it is root's or ours, has one name, and is in a directory of root's or
 *   ours that nobody else can write to, or a sticky one; any other is
 *   refused, never followed (at most 40 links);
 * - a regular file is written to a new temporary file (O_EXCL) in the same
 *   directory, renamed over FILE only when everything was written, so a
 *   failed run leaves the old file as it was; one of another user is
 *   refused;
 * - a device, or a FIFO of root's or ours or behind one of our descriptors
 *   (/dev/stdout), is written directly, reopened from what was checked.
 */
#ifndef WPROF_OUTFILE_H
#define WPROF_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;
	char *path; /* as given, for messages */
	char *name; /* the name to give the result in dir */
	char *tmp;  /* the temporary file in dir, or NULL when writing directly */
	int dir;    /* the directory of both, held from the checks to the rename; open while tmp is set */
};

/* Prints one error line and returns -errno when @path cannot be written. */
int outfile__open(const char *path, struct outfile *out);
/* Flush, and put the file in place. Prints one error line on failure; 0 or -errno. */
int outfile__commit(struct outfile *out);
/* Remove what was written (the old file stays). NULL members ok. */
void outfile__abort(struct outfile *out);

#endif /* WPROF_OUTFILE_H */
