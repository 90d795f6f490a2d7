/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bounds on one stack read from a file (the folded text `wprof diff`
 * reads, the lines of a saved recording): whatever the file holds, a stack
 * takes at most a few thousand frames and a MiB, so that what is built from
 * it (a flame graph's tree, pprof's locations, the diff's table) stays small.
 * wprof's own stacks are far below (at most 514 frames of at most 255 bytes:
 * profile_priv.h asserts it), so nothing wprof wrote is ever cut.
 *
 * A stack beyond them keeps its frames from the root, then one frame
 * STACKCAP_MARK in place of the frames cut, then its last frame (the leaf,
 * or the tag with --tag-leaf) when that is short: the tree still merges by
 * its root, and the line keeps its kind of time and where it was spent.
 */
#ifndef WPROF_STACKCAP_H
#define WPROF_STACKCAP_H

#include <stdbool.h>
#include <stddef.h>

#define STACKCAP_FRAMES 2048
#define STACKCAP_MIB 1
#define STACKCAP_BYTES (STACKCAP_MIB << 20) /* the frames joined by ';' */
#define STACKCAP_LEAF 4096                  /* the longest last frame kept after a cut */
#define STACKCAP_MARK "[cut: too long to read]"

#define STACKCAP_STR_(x) #x
#define STACKCAP_STR(x) STACKCAP_STR_(x)
/* The limits in words, for messages. */
#define STACKCAP_WORDS STACKCAP_STR(STACKCAP_FRAMES) " frames and " STACKCAP_STR(STACKCAP_MIB) " MiB"

struct stackcap {
	size_t frames; /* at most this many frames, the marker included */
	size_t bytes;  /* at most this many bytes */
	size_t leaf;   /* a cut keeps the last frame when it is at most this long */
};

/* What wprof reads with: STACKCAP_FRAMES, STACKCAP_BYTES, STACKCAP_LEAF. */
extern const struct stackcap stackcap_default;

/*
 * Whether @lim can hold a cut stack: 3 frames (a root frame, the marker,
 * the leaf), and room for the marker and a leaf of @lim->leaf bytes.
 */
bool stackcap__valid(const struct stackcap *lim);

/*
 * Whether the ';'-joined @stack (@len bytes) is beyond @lim; when it is,
 * the stack to keep instead, cut as said above, is in @out (room for
 * @lim->bytes + 1 bytes, NUL-terminated) and its length in *@out_len.
 */
bool stackcap__cut(const struct stackcap *lim, const char *stack, size_t len, char *out,
		   size_t *out_len);

/*
 * The same for a stack known in parts, as a reader that did not keep all
 * of a long line knows it: @root its first frames (whole frames joined by
 * ';', @rlen bytes, 0 for none), @leaf its last frame (@llen bytes; NULL
 * when it was too long to keep). Always cuts.
 */
void stackcap__cut_parts(const struct stackcap *lim, const char *root, size_t rlen,
			 const char *leaf, size_t llen, char *out, size_t *out_len);

#endif /* WPROF_STACKCAP_H */
