// SPDX-License-Identifier: GPL-2.0-only
/* Folded text read one line at a time, in bounded memory: see foldread.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "foldread.h"

#define BLK_BYTES (64 * 1024)
/* a space and a weight (at most 20 digits), and some to spare */
#define WEIGHT_ROOM 32
#define PREFIX_MAX 16

int foldread__init(struct foldread *r, FILE *f, const struct stackcap *lim, const void *prefix,
		   size_t n)
{
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->lim = lim ? *lim : stackcap_default;
	if (!stackcap__valid(&r->lim) || n > PREFIX_MAX)
		return -EINVAL;
	r->head_cap = r->lim.bytes + WEIGHT_ROOM;
	/* twice what is kept of a line's end: it moves back once per that many bytes */
	r->tail_cap = 2 * (r->lim.leaf + WEIGHT_ROOM);
	r->blk = malloc(BLK_BYTES);
	r->head = calloc(1, r->head_cap + 1);
	r->tail = malloc(r->tail_cap);
	r->cut = malloc(r->lim.bytes + 1);
	if (!r->blk || !r->head || !r->tail || !r->cut) {
		foldread__free(r);
		return -ENOMEM;
	}
	if (n)
		memcpy(r->blk, prefix, n);
	r->blk_len = n;
	return 0;
}

void foldread__free(struct foldread *r)
{
	free(r->blk);
	free(r->head);
	free(r->tail);
	free(r->cut);
	memset(r, 0, sizeof(*r));
}

/* Whether @p holds a byte no folded line has: a control byte, or an empty frame (";;"). */
static bool bad_bytes(const unsigned char *p, size_t n, unsigned char *prev)
{
	bool bad = false;

	for (size_t i = 0; i < n; i++) {
		bad |= p[i] < 0x20 || p[i] == 0x7f || (p[i] == ';' && *prev == ';');
		*prev = p[i];
	}
	return bad;
}

/* Keep the last r->lim.leaf + WEIGHT_ROOM bytes of the line: what its leaf and weight are. */
static void tail_put(struct foldread *r, const void *p, size_t n)
{
	size_t keep = r->lim.leaf + WEIGHT_ROOM;

	if (n >= keep) {
		memcpy(r->tail, (const char *)p + n - keep, keep);
		r->tail_len = keep;
		return;
	}
	if (r->tail_len + n > r->tail_cap) {
		memmove(r->tail, r->tail + r->tail_len - (keep - n), keep - n);
		r->tail_len = keep - n;
	}
	memcpy(r->tail + r->tail_len, p, n);
	r->tail_len += n;
}

/* @n bytes of the current line: into head while they fit, then read past. */
static void take(struct foldread *r, const unsigned char *p, size_t n)
{
	size_t fit = 0;

	if (!r->over) {
		fit = r->head_cap - r->head_len < n ? r->head_cap - r->head_len : n;
		memcpy(r->head + r->head_len, p, fit);
		r->head_len += fit;
		if (fit == n)
			return;
		r->over = true;
		r->prev = r->head[r->head_len - 1];
		tail_put(r, r->head, r->head_len);
	}
	r->bad |= bad_bytes(p + fit, n - fit, &r->prev);
	tail_put(r, p + fit, n - fit);
}

/* Read ahead: 1 with bytes in r->blk, 0 at the end of the file, or -errno. */
static int fill(struct foldread *r)
{
	if (r->blk_off < r->blk_len)
		return 1;
	if (r->eof)
		return 0;
	errno = 0;
	r->blk_off = 0;
	r->blk_len = fread(r->blk, 1, BLK_BYTES, r->f);
	if (r->blk_len)
		return 1;
	if (ferror(r->f))
		return errno ? -errno : -EIO;
	r->eof = true;
	return 0;
}

/* The next line into head (and tail): 1, 0 at the end of the file, or -errno. */
static int read_line(struct foldread *r)
{
	bool any = false;

	r->head_len = 0;
	r->tail_len = 0;
	r->over = false;
	r->bad = false;
	for (;;) {
		const unsigned char *p, *nl;
		size_t n;
		int ret = fill(r);

		if (ret <= 0)
			return ret < 0 ? ret : any;
		any = true;
		p = r->blk + r->blk_off;
		nl = memchr(p, '\n', r->blk_len - r->blk_off);
		n = nl ? (size_t)(nl - p) : r->blk_len - r->blk_off;
		take(r, p, n);
		r->blk_off += n + (nl != NULL);
		/* no need to read to the end of a line already refused (/dev/zero's) */
		if (nl || (r->over && r->bad))
			return 1;
	}
}

/*
 * A line that did not fit: its stack cut from its first frames (in head)
 * and its last (in tail), then its weight, into head. 0 or -EINVAL.
 */
static int cut_long(struct foldread *r, __u64 *weight, size_t *len)
{
	unsigned char prev = ';'; /* a ';' first is an empty first frame */
	const char *sp, *semi, *leaf = NULL, *rsemi;
	size_t llen = 0, wlen, n;

	if (r->bad || bad_bytes((const unsigned char *)r->head, r->head_len, &prev))
		return -EINVAL;
	sp = memrchr(r->tail, ' ', r->tail_len);
	if (!sp || sp == r->tail || sp[-1] == ';')
		return -EINVAL; /* no weight, one too long to be one, or an empty last frame */
	wlen = r->tail + r->tail_len - sp - 1;
	semi = memrchr(r->tail, ';', sp - r->tail);
	if (semi) {
		leaf = semi + 1;
		llen = sp - leaf;
	}
	rsemi = memrchr(r->head, ';', r->head_len);
	stackcap__cut_parts(&r->lim, r->head, rsemi ? (size_t)(rsemi - r->head) : 0, leaf, llen,
			    r->cut, &n);
	if (n + 1 + wlen > r->head_cap)
		return -EINVAL;
	memcpy(r->head, r->cut, n);
	r->head[n] = ' ';
	memcpy(r->head + n + 1, sp + 1, wlen);
	r->head[n + 1 + wlen] = '\0';
	/* the frames kept, the leaf and the weight: as strict as a line read whole */
	if (folded__parse_line(r->head, NULL, weight))
		return -EINVAL;
	r->head[n] = '\0';
	*len = n;
	return 0;
}

/* A line read whole: checked, its stack cut when it is beyond the limits. 0 or -EINVAL. */
static int check_whole(struct foldread *r, __u64 *weight, size_t *len, bool *cut)
{
	const char *sp;
	size_t n;

	r->head[r->head_len] = '\0';
	if (memchr(r->head, '\0', r->head_len) || folded__parse_line(r->head, NULL, weight))
		return -EINVAL;
	sp = memrchr(r->head, ' ', r->head_len);
	*len = sp - r->head;
	r->head[*len] = '\0';
	*cut = stackcap__cut(&r->lim, r->head, *len, r->cut, &n);
	if (*cut) {
		memcpy(r->head, r->cut, n + 1);
		*len = n;
	}
	return 0;
}

int foldread__next(struct foldread *r, char **stack, size_t *len, __u64 *weight, bool *cut)
{
	int ret;

	*cut = false;
	do {
		ret = read_line(r);
		if (ret <= 0)
			return ret;
		r->lineno++;
	} while (!r->head_len && !r->over); /* a blank line says nothing */
	*stack = r->head;
	if (r->over) {
		ret = cut_long(r, weight, len);
		*cut = !ret;
	} else {
		ret = check_whole(r, weight, len, cut);
	}
	if (ret)
		r->head[r->head_len] = '\0'; /* what the line starts with, for the message */
	return ret ? ret : 1;
}
