/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Aggregation of weighted stacks and the "folded" text format that
 * flamegraph.pl, speedscope and inferno read:
 *
 *	frame0;frame1;...;frameN WEIGHT
 *
 * one line per distinct stack, root first, weights summed.
 */
#ifndef WPROF_FOLDED_H
#define WPROF_FOLDED_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct folded;

/* Returns NULL and sets errno on failure. */
struct folded *folded__new(void);
/* NULL is ok. */
void folded__free(struct folded *f);

/*
 * Add @weight to the stack made of @frames[0..@nr) (root first). Frames are
 * stored as sanitized copies (see folded__sanitize()), so callers may pass
 * any string. Identical sanitized sequences are merged, their weights summed
 * (saturating at U64_MAX rather than wrapping). Returns 0 or -errno
 * (-EINVAL for @nr == 0: a line without frames is not valid folded text).
 */
int folded__add(struct folded *f, const char *const *frames, size_t nr, __u64 weight);
/* The same, merging `count` intervals whose largest is `max`. */
int folded__add_stats(struct folded *f, const char *const *frames, size_t nr, __u64 weight,
		      __u64 count, __u64 max);
/* Every stack in line order: `line` is the sanitized frames joined by ';'. */
typedef int (*folded_fn)(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx);
int folded__for_each(const struct folded *f, folded_fn fn, void *ctx);

/*
 * Where in time a line's weight was (recording.h: the window's slices): in
 * slices [slice, slice + span), spread evenly; span 0: not known. count and
 * max are those of the intervals or samples that ended in it.
 */
struct folded_piece {
	__u32 slice, span;
	__u64 weight, count, max;
};

/* folded__add_stats() of @p's weight, count and max, and @p kept as the line's. */
int folded__add_piece(struct folded *f, const char *const *frames, size_t nr,
		      const struct folded_piece *p);
/* folded__add_stats(), and @p[0..@n) kept as the line's pieces (their totals not added). */
int folded__add_full(struct folded *f, const char *const *frames, size_t nr, __u64 weight,
		     __u64 count, __u64 max, const struct folded_piece *p, size_t n);
/*
 * Keep @p[0..@n) as pieces of the line @line (@len bytes, as folded__for_each()
 * gives it), which must be there: its totals are not changed. 0, -ENOENT or
 * -ENOMEM.
 */
int folded__put_pieces(struct folded *f, const char *line, size_t len,
		       const struct folded_piece *p, size_t n);
/*
 * folded__for_each() with each line's pieces, sorted by slice, one per
 * (slice, span); a line added without any has none, and its weight beyond
 * its pieces' is not known in time.
 */
typedef int (*folded_pieces_fn)(const char *line, __u64 weight, __u64 count, __u64 max,
				const struct folded_piece *p, size_t n, void *ctx);
int folded__for_each_pieces(const struct folded *f, folded_pieces_fn fn, void *ctx);

/*
 * Every line's pieces in slices twice as long (see store__coarsen()). 0, or
 * -ENOMEM: some lines may have theirs as they were (the recording must fail).
 */
int folded__coarsen(struct folded *f);

/* Number of distinct stacks added so far. */
size_t folded__nr(const struct folded *f);

/*
 * Write every stack as `a;b;c WEIGHT\n`, sorted bytewise by their frames so
 * the same input always gives the same file. Flushes @out. Returns 0,
 * -ENOMEM, or -EIO when writing failed.
 */
int folded__write(const struct folded *f, FILE *out);

/*
 * Copy @src into @dst (@size bytes, always NUL-terminated when @size > 0) so
 * that it is a valid folded frame: its safe text (safestr.h: control
 * characters and what is not valid UTF-8 as \xNN) with ';' as ':', and
 * "[empty]" for an empty or NULL @src. Spaces and UTF-8 characters are
 * kept. A name that does not fit is cut before the first character or
 * escape that does not fit (SAFESTR_SIZE(strlen(@src)) always does).
 */
void folded__sanitize(char *dst, size_t size, const char *src);

/*
 * Strict parser of one folded line: frames joined by ';', none empty, none
 * containing ';' or a control character, then one space, then an unsigned
 * decimal weight that fits in 64 bits, then nothing but an optional final
 * '\n' (as getline() returns lines). Frames may contain spaces: the weight
 * is what follows the last space. Returns 0 and fills @nr_frames and
 * @weight (either may be NULL), or -EINVAL.
 */
int folded__parse_line(const char *line, size_t *nr_frames, __u64 *weight);

#endif /* WPROF_FOLDED_H */
