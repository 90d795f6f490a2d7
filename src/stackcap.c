// SPDX-License-Identifier: GPL-2.0-only
/* The bounds on one stack read from a file: see stackcap.h. */
#include <string.h>

#include "stackcap.h"

#define MARK_LEN (sizeof(STACKCAP_MARK) - 1)

const struct stackcap stackcap_default = {
	.frames = STACKCAP_FRAMES,
	.bytes = STACKCAP_BYTES,
	.leaf = STACKCAP_LEAF,
};

bool stackcap__valid(const struct stackcap *lim)
{
	/* a root frame of one byte, ';', the marker, ';', the longest leaf */
	return lim->frames >= 3 && lim->leaf >= 1 && lim->bytes >= 1 + 1 + MARK_LEN + 1 + lim->leaf;
}

/* Whether @stack has more than @max frames: stops counting there. */
static bool deeper_than(const char *stack, size_t len, size_t max)
{
	const char *p = stack, *end = stack + len;
	size_t frames = 1;

	while ((p = memchr(p, ';', end - p))) {
		if (++frames > max)
			return true;
		p++;
	}
	return false;
}

void stackcap__cut_parts(const struct stackcap *lim, const char *root, size_t rlen,
			 const char *leaf, size_t llen, char *out, size_t *out_len)
{
	bool keep_leaf = leaf && llen && llen <= lim->leaf;
	/* root frames: room for the marker, and the leaf when it is kept */
	size_t max_frames = lim->frames - 1 - keep_leaf;
	size_t room = lim->bytes - MARK_LEN - (keep_leaf ? llen + 1 : 0);
	size_t keep = 0, frames = 0, n = 0;
	const char *p = root, *end = root + rlen;

	/* the longest run of whole frames from the root that fits, with its ';' */
	while (p < end && frames < max_frames) {
		const char *semi = memchr(p, ';', end - p);
		size_t stop = (semi ? semi : end) - root;

		if (stop + 1 > room)
			break;
		keep = stop;
		frames++;
		p = root + stop + 1;
	}
	if (keep) {
		memcpy(out, root, keep);
		out[keep] = ';';
		n = keep + 1;
	}
	memcpy(out + n, STACKCAP_MARK, MARK_LEN);
	n += MARK_LEN;
	if (keep_leaf) {
		out[n++] = ';';
		memcpy(out + n, leaf, llen);
		n += llen;
	}
	out[n] = '\0';
	*out_len = n;
}

bool stackcap__cut(const struct stackcap *lim, const char *stack, size_t len, char *out,
		   size_t *out_len)
{
	const char *last;

	if (len <= lim->bytes && !deeper_than(stack, len, lim->frames))
		return false;
	last = memrchr(stack, ';', len);
	if (!last) /* one frame, longer than the limit: nothing of it is kept */
		stackcap__cut_parts(lim, stack, 0, NULL, 0, out, out_len);
	else
		stackcap__cut_parts(lim, stack, last - stack, last + 1, stack + len - last - 1, out,
				    out_len);
	return true;
}
