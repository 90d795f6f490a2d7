/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The outputs of a recording (-o, given up to MAX_OUTPUTS times, or
 * stdout), each in its format: opened before recording, so that a path
 * that cannot be written fails before anything is measured, and written
 * from a struct recording by the writer of each format.
 */
#ifndef WPROF_OUTPUT_H
#define WPROF_OUTPUT_H

#include <stdio.h>

#include "opts.h"
#include "outfile.h"
#include "recording.h"

struct output {
	const struct output_spec *spec;
	FILE *f;
	struct outfile file; /* -o */
};

struct outputs {
	struct output outs[MAX_OUTPUTS];
	size_t nr;
};

/* Open each of @specs (@nr of them, kept by the caller). Prints one error line; 0 or -errno. */
int outputs__open(struct outputs *o, const struct output_spec *specs, size_t nr);
/*
 * Write @r to every output and put the files in place; a failed one is
 * named in one line and does not stop the others. A saved recording (.wprof)
 * is written as it is (and, for GROUP_NONE, json and the threads table,
 * whose stacks are each a thread's), then @r's lines are grouped by @g
 * (recording__group()) for the other outputs. 0 or the first -errno.
 */
int outputs__write(struct outputs *o, struct recording *r, enum group_by g);
/* Remove the files of outputs not committed (a failed run leaves the old files). */
void outputs__abort(struct outputs *o);

/* Write @r in @format to @f. 0 or -errno. */
int output__write(struct recording *r, enum output_format format, FILE *f);

#endif /* WPROF_OUTPUT_H */
