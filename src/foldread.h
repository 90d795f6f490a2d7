/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Folded text read from a file one line at a time, in bounded memory: a
 * line is kept whole up to the stack limits (stackcap.h) and its weight;
 * of a longer one, only its first bytes and its last ones are kept while
 * the rest is read past, and its stack is cut as stackcap__cut() cuts it.
 * A line of any length (a 50-million-frame stack, a file without a newline)
 * takes a few MiB at most.
 */
#ifndef WPROF_FOLDREAD_H
#define WPROF_FOLDREAD_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "stackcap.h"

struct foldread {
	FILE *f;
	struct stackcap lim;
	unsigned char *blk; /* bytes read ahead */
	size_t blk_len, blk_off;
	char *head;         /* the line's first bytes, then the line returned */
	size_t head_len, head_cap;
	char *tail;         /* the last bytes of a line too long for head */
	size_t tail_len, tail_cap;
	char *cut;          /* a cut stack */
	size_t lineno;      /* of the line last returned, from 1 */
	bool over;          /* the line did not fit in head */
	bool bad;           /* a byte read past was no folded text's */
	unsigned char prev; /* the byte before those read past next */
	bool eof;
};

/*
 * Read @f (not closed by foldread__free()) with the limits @lim (NULL:
 * stackcap_default), after the @n bytes of @prefix (up to 16: what was
 * read of @f to tell what it is; NULL when @n is 0). 0, -EINVAL for bad
 * limits, -ENOMEM.
 */
int foldread__init(struct foldread *r, FILE *f, const struct stackcap *lim, const void *prefix,
		   size_t n);
void foldread__free(struct foldread *r);

/*
 * The next stack: 1 with *@stack (its frames joined by ';', NUL-terminated,
 * valid until the next call), *@len, *@weight, and *@cut when it was cut to
 * the limits; 0 at the end. Blank lines are skipped. -EINVAL for a line
 * that is not folded text (as folded__parse_line() says; a NUL byte is not
 * either), with *@stack its first bytes and r->lineno its number, for the
 * message; -errno when reading failed.
 */
int foldread__next(struct foldread *r, char **stack, size_t *len, __u64 *weight, bool *cut);

#endif /* WPROF_FOLDREAD_H */
