// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack aggregation for the folded output: an open-addressing hash table
 * (linear probing, power-of-two size) keyed by the already joined line
 * "a;b;c". Keying by the joined text rather than by frame pointers makes
 * merging exact after sanitizing: two different raw names that sanitize to
 * the same text ("a;b" and "a:b") are one frame in the output, so they must
 * be one stack here too.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "folded.h"
#include "safestr.h"
#include "slices.h"

#define FOLDED_INIT_CAP 1024 /* slots; a short recording fits without a rehash */
#define EMPTY_FRAME "[empty]"

struct stack_ent {
	char *key; /* sanitized frames joined by ';'; NULL marks a free slot */
	size_t len;
	__u64 hash;
	__u64 weight;
	__u64 count; /* intervals or samples merged here */
	__u64 max;   /* the largest single one */
	struct folded_piece *pieces; /* its time in slices of the window, as added */
	__u32 nr_pieces, cap_pieces;
};

struct folded {
	struct stack_ent *slots;
	size_t cap; /* power of two */
	size_t nr;
	char *buf; /* scratch for building a key, reused across calls */
	size_t buf_cap;
};

struct folded *folded__new(void)
{
	struct folded *f;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->cap = FOLDED_INIT_CAP;
	f->slots = calloc(f->cap, sizeof(*f->slots));
	if (!f->slots) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void folded__free(struct folded *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->cap; i++) {
		free(f->slots[i].key);
		free(f->slots[i].pieces);
	}
	free(f->slots);
	free(f->buf);
	free(f);
}

size_t folded__nr(const struct folded *f)
{
	return f->nr;
}

/*
 * The one place that decides what a frame holds: its safe text (see
 * safestr.h), with ';', the separator, as ':'. The piece of frame that the
 * start of @s (@n > 0 bytes left) makes goes into @out (*@len bytes, at
 * most 4); returns how many bytes of @s it stands for.
 */
static size_t frame_piece(const char *s, size_t n, char out[5], size_t *len)
{
	size_t c = safestr__char_len(s, n);

	if (c == 1 && *s == ';') {
		out[0] = ':';
		*len = 1;
		return 1;
	}
	if (c) {
		memcpy(out, s, c);
		*len = c;
		return c;
	}
	safestr__hex(out, *s);
	*len = 4;
	return 1;
}

/* @s's frame into @dst (NULL: only counted); its length. */
static size_t put_frame(char *dst, const char *s)
{
	size_t pos = 0;

	for (size_t i = 0; s[i];) {
		unsigned char c = s[i];
		char piece[5];
		size_t len;

		/* printable ASCII, nearly every byte of a name, without a call */
		if (c >= 0x20 && c < 0x7f) {
			if (dst)
				dst[pos] = c == ';' ? ':' : c;
			pos++;
			i++;
			continue;
		}
		/* a character is at most 4 bytes: no need to know the rest's length */
		i += frame_piece(s + i, strnlen(s + i, 4), piece, &len);
		if (dst)
			memcpy(dst + pos, piece, len);
		pos += len;
	}
	return pos;
}

void folded__sanitize(char *dst, size_t size, const char *src)
{
	size_t n, pos = 0;

	if (!size)
		return;
	if (!src || !src[0])
		src = EMPTY_FRAME;
	n = strlen(src);
	/* a name that does not fit is cut before the first piece that does not */
	for (size_t i = 0; i < n;) {
		char piece[5];
		size_t len, used = frame_piece(src + i, n - i, piece, &len);

		if (pos + len >= size)
			break;
		memcpy(dst + pos, piece, len);
		pos += len;
		i += used;
	}
	dst[pos] = '\0';
}

/* FNV-1a, then a 64-bit finalizer so low bits (the slot index) depend on every byte. */
static __u64 key_hash(const char *s, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static int buf_reserve(struct folded *f, size_t need)
{
	size_t cap = f->buf_cap ? f->buf_cap : 256;
	char *buf;

	if (need <= f->buf_cap)
		return 0;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	buf = realloc(f->buf, cap);
	if (!buf)
		return -ENOMEM;
	f->buf = buf;
	f->buf_cap = cap;
	return 0;
}

/* Join sanitized @frames into f->buf; returns the key length or -errno. */
static ssize_t build_key(struct folded *f, const char *const *frames, size_t nr)
{
	size_t i, len = 0, pos = 0;
	int err;

	for (i = 0; i < nr; i++) {
		const char *s = frames[i] && frames[i][0] ? frames[i] : EMPTY_FRAME;
		size_t n = put_frame(NULL, s);

		if (len > SIZE_MAX - n - 2)
			return -ENOMEM;
		len += n + 1; /* + ';' or the final NUL */
	}
	err = buf_reserve(f, len);
	if (err)
		return err;

	for (i = 0; i < nr; i++) {
		const char *s = frames[i] && frames[i][0] ? frames[i] : EMPTY_FRAME;

		if (i)
			f->buf[pos++] = ';';
		pos += put_frame(f->buf + pos, s);
	}
	f->buf[pos] = '\0';
	return pos;
}

/* Slot holding @key, or the free slot where it belongs. */
static struct stack_ent *find_slot(struct stack_ent *slots, size_t cap, const char *key,
				   size_t len, __u64 hash)
{
	size_t mask = cap - 1, i = hash & mask;

	/* Terminates: the table is never more than 3/4 full. */
	for (;; i = (i + 1) & mask) {
		struct stack_ent *e = &slots[i];

		if (!e->key)
			return e;
		if (e->hash == hash && e->len == len && memcmp(e->key, key, len) == 0)
			return e;
	}
}

static int grow(struct folded *f)
{
	struct stack_ent *slots;
	size_t cap, i;

	if (f->cap > SIZE_MAX / 2 / sizeof(*slots))
		return -ENOMEM;
	cap = f->cap * 2;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < f->cap; i++) {
		struct stack_ent *e = &f->slots[i];

		if (e->key)
			*find_slot(slots, cap, e->key, e->len, e->hash) = *e;
	}
	free(f->slots);
	f->slots = slots;
	f->cap = cap;
	return 0;
}

int folded__add(struct folded *f, const char *const *frames, size_t nr, __u64 weight)
{
	return folded__add_stats(f, frames, nr, weight, 1, weight);
}

static __u64 sat_add(__u64 a, __u64 b)
{
	/* Saturate: a wrapped sum would silently shrink a hot stack. */
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The entry of the line in f->buf (@len bytes), made (empty) if new; NULL: out of memory. */
static struct stack_ent *entry(struct folded *f, size_t len)
{
	__u64 hash = key_hash(f->buf, len);
	struct stack_ent *e = find_slot(f->slots, f->cap, f->buf, len, hash);

	if (e->key)
		return e;
	if ((f->nr + 1) * 4 > f->cap * 3) {
		if (grow(f))
			return NULL;
		e = find_slot(f->slots, f->cap, f->buf, len, hash);
	}
	e->key = malloc(len + 1);
	if (!e->key)
		return NULL;
	memcpy(e->key, f->buf, len + 1);
	e->len = len;
	e->hash = hash;
	f->nr++;
	return e;
}

static void add_to(struct stack_ent *e, __u64 weight, __u64 count, __u64 max)
{
	e->weight = sat_add(e->weight, weight);
	e->count = sat_add(e->count, count);
	if (max > e->max)
		e->max = max;
}

/*
 * The line's max as given out: what one interval or sample weighs is at
 * most the line's weight, and a line of one is that one's weight (its
 * pieces are all its, folded__add_piece(), each rounded alike). Applied
 * here, not as pieces come: a line's first pieces may be of others.
 */
static __u64 shown_max(const struct stack_ent *e)
{
	return e->count == 1 || e->max > e->weight ? e->weight : e->max;
}

int folded__add_stats(struct folded *f, const char *const *frames, size_t nr, __u64 weight,
		      __u64 count, __u64 max)
{
	return folded__add_full(f, frames, nr, weight, count, max, NULL, 0);
}

static int cmp_piece(const void *a, const void *b)
{
	const struct folded_piece *x = a, *y = b;

	return slices__cmp(x->slice, x->span, y->slice, y->span);
}

/* Add piece @p's time and counts to @to, a piece of the same slices. */
static void merge_piece(struct folded_piece *to, const struct folded_piece *p)
{
	to->weight = sat_add(to->weight, p->weight);
	to->count = sat_add(to->count, p->count);
	if (p->max > to->max)
		to->max = p->max;
}

/* Sort @e's pieces and merge those of the same slices. */
static void compact_pieces(struct stack_ent *e)
{
	__u32 n = 0;

	if (e->nr_pieces < 2)
		return;
	qsort(e->pieces, e->nr_pieces, sizeof(*e->pieces), cmp_piece);
	for (__u32 i = 0; i < e->nr_pieces; i++) {
		struct folded_piece *p = &e->pieces[i], *last = n ? &e->pieces[n - 1] : NULL;

		if (last && !cmp_piece(last, p)) {
			merge_piece(last, p);
			continue;
		}
		e->pieces[n++] = *p;
	}
	e->nr_pieces = n;
}

static int put_piece(struct stack_ent *e, const struct folded_piece *p)
{
	struct folded_piece *last = e->nr_pieces ? &e->pieces[e->nr_pieces - 1] : NULL;

	if (last && !cmp_piece(last, p)) {
		merge_piece(last, p);
		return 0;
	}
	if (e->nr_pieces == e->cap_pieces) {
		__u32 cap = e->cap_pieces ? 2 * e->cap_pieces : 4;
		struct folded_piece *grown;

		/* merge first: lines of many threads put the same slices in turn */
		compact_pieces(e);
		if (e->nr_pieces < e->cap_pieces * 3 / 4)
			cap = e->cap_pieces;
		if (cap != e->cap_pieces) {
			if (cap > UINT32_MAX / 2)
				return -ENOMEM;
			grown = realloc(e->pieces, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			e->pieces = grown;
			e->cap_pieces = cap;
		}
	}
	e->pieces[e->nr_pieces++] = *p;
	return 0;
}

int folded__add_piece(struct folded *f, const char *const *frames, size_t nr,
		      const struct folded_piece *p)
{
	return folded__add_full(f, frames, nr, p->weight, p->count, p->max, p, 1);
}

int folded__add_full(struct folded *f, const char *const *frames, size_t nr, __u64 weight,
		     __u64 count, __u64 max, const struct folded_piece *p, size_t n)
{
	struct stack_ent *e;
	ssize_t len;
	int err = 0;

	if (!nr || !frames)
		return -EINVAL;
	len = build_key(f, frames, nr);
	if (len < 0)
		return len;
	e = entry(f, len);
	if (!e)
		return -ENOMEM;
	add_to(e, weight, count, max);
	for (size_t i = 0; i < n && !err; i++)
		err = put_piece(e, &p[i]);
	return err;
}

int folded__put_pieces(struct folded *f, const char *line, size_t len,
		       const struct folded_piece *p, size_t n)
{
	struct stack_ent *e;
	int err;

	if (!n)
		return 0;
	err = buf_reserve(f, len + 1);
	if (err)
		return err;
	memcpy(f->buf, line, len);
	f->buf[len] = '\0';
	e = find_slot(f->slots, f->cap, f->buf, len, key_hash(f->buf, len));
	if (!e->key)
		return -ENOENT;
	for (size_t i = 0; i < n && !err; i++)
		err = put_piece(e, &p[i]);
	return err;
}

/* @e's pieces in slices twice as long. */
static int coarsen_pieces(struct stack_ent *e)
{
	struct folded_piece *to;
	size_t n = 0, cap = 0;

	for (__u32 i = 0; i < e->nr_pieces; i++) {
		struct slice_part parts[3];

		cap += slices__coarsen(e->pieces[i].slice, e->pieces[i].span, 1, parts);
	}
	if (cap > UINT32_MAX / 2)
		return -ENOMEM;
	to = cap ? malloc(cap * sizeof(*to)) : NULL;
	if (cap && !to)
		return -ENOMEM;
	for (__u32 i = 0; i < e->nr_pieces; i++) {
		const struct folded_piece *p = &e->pieces[i];
		struct slice_part parts[3];
		int k = slices__coarsen(p->slice, p->span, 1, parts);
		__u64 left = p->weight;

		for (int j = 0; j < k; j++) {
			bool last = j == k - 1;

			to[n++] = (struct folded_piece){
				.slice = parts[j].slice, .span = parts[j].span,
				.weight = slices__share(p->weight, &parts[j], p->span, &left, last),
				.count = last ? p->count : 0, .max = last ? p->max : 0,
			};
		}
	}
	free(e->pieces);
	e->pieces = to;
	e->nr_pieces = e->cap_pieces = n;
	compact_pieces(e);
	return 0;
}

int folded__coarsen(struct folded *f)
{
	for (size_t i = 0; i < f->cap; i++) {
		int err = f->slots[i].key && f->slots[i].nr_pieces ? coarsen_pieces(&f->slots[i]) : 0;

		if (err)
			return err;
	}
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct stack_ent *x = *(const struct stack_ent *const *)a;
	const struct stack_ent *y = *(const struct stack_ent *const *)b;

	return strcmp(x->key, y->key);
}

/* The entries in line order (NULL-free array of f->nr), or NULL. */
static const struct stack_ent **sorted(const struct folded *f)
{
	const struct stack_ent **ents;
	size_t n = 0;

	ents = malloc((f->nr ? f->nr : 1) * sizeof(*ents));
	if (!ents)
		return NULL;
	for (size_t i = 0; i < f->cap; i++) {
		if (f->slots[i].key)
			ents[n++] = &f->slots[i];
	}
	qsort(ents, n, sizeof(*ents), cmp_ent);
	return ents;
}

int folded__for_each(const struct folded *f, folded_fn fn, void *ctx)
{
	const struct stack_ent **ents = sorted(f);
	int err = 0;

	if (!ents)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr && !err; i++)
		err = fn(ents[i]->key, ents[i]->weight, ents[i]->count, shown_max(ents[i]), ctx);
	free(ents);
	return err;
}

int folded__for_each_pieces(const struct folded *f, folded_pieces_fn fn, void *ctx)
{
	const struct stack_ent **ents = sorted(f);
	int err = 0;

	if (!ents)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr && !err; i++) {
		const struct stack_ent *e = ents[i];

		/* merged: sorted, one piece per slices (the table's own, not its meaning) */
		compact_pieces((struct stack_ent *)e);
		err = fn(e->key, e->weight, e->count, shown_max(e), e->pieces, e->nr_pieces, ctx);
	}
	free(ents);
	return err;
}

int folded__write(const struct folded *f, FILE *out)
{
	const struct stack_ent **ents = sorted(f);
	size_t i;
	int err = 0;

	if (!ents)
		return -ENOMEM;
	for (i = 0; i < f->nr; i++) {
		if (fprintf(out, "%s %llu\n", ents[i]->key, (unsigned long long)ents[i]->weight) < 0) {
			err = errno ? -errno : -EIO;
			break;
		}
	}
	/* Errors of buffered writes (ENOSPC, EPIPE...) only show up at flush. */
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	free(ents);
	return err;
}

int folded__parse_line(const char *line, size_t *nr_frames, __u64 *weight)
{
	size_t len = strlen(line), nr = 1, frame_len = 0;
	const char *sp, *p, *end;
	__u64 w = 0;

	if (len && line[len - 1] == '\n')
		len--;
	end = line + len;
	sp = memrchr(line, ' ', len);
	if (!sp || sp == line || sp + 1 == end)
		return -EINVAL;

	for (p = sp + 1; p < end; p++) {
		unsigned int d;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		d = *p - '0';
		if (w > (UINT64_MAX - d) / 10)
			return -EINVAL; /* does not fit in 64 bits */
		w = w * 10 + d;
	}

	for (p = line; p < sp; p++) {
		unsigned char c = *p;

		if (c == ';') {
			if (!frame_len)
				return -EINVAL;
			nr++;
			frame_len = 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		frame_len++;
	}
	if (!frame_len)
		return -EINVAL;

	if (nr_frames)
		*nr_frames = nr;
	if (weight)
		*weight = w;
	return 0;
}
