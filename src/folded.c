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

#define FOLDED_INIT_CAP 1024 /* slots; a short recording fits without a rehash */
#define EMPTY_FRAME "[empty]"

struct stack_ent {
	char *key; /* sanitized frames joined by ';'; NULL marks a free slot */
	size_t len;
	__u64 hash;
	__u64 weight;
	__u64 count; /* intervals or samples merged here */
	__u64 max;   /* the largest single one */
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
	for (i = 0; i < f->cap; i++)
		free(f->slots[i].key);
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

int folded__add_stats(struct folded *f, const char *const *frames, size_t nr, __u64 weight,
		      __u64 count, __u64 max)
{
	struct stack_ent *e;
	ssize_t len;
	__u64 hash;
	int err;

	if (!nr || !frames)
		return -EINVAL;
	len = build_key(f, frames, nr);
	if (len < 0)
		return len;
	hash = key_hash(f->buf, len);

	e = find_slot(f->slots, f->cap, f->buf, len, hash);
	if (e->key) {
		e->weight = sat_add(e->weight, weight);
		e->count = sat_add(e->count, count);
		if (max > e->max)
			e->max = max;
		return 0;
	}

	if ((f->nr + 1) * 4 > f->cap * 3) {
		err = grow(f);
		if (err)
			return err;
		e = find_slot(f->slots, f->cap, f->buf, len, hash);
	}
	e->key = malloc(len + 1);
	if (!e->key)
		return -ENOMEM;
	memcpy(e->key, f->buf, len + 1);
	e->len = len;
	e->hash = hash;
	e->weight = weight;
	e->count = count;
	e->max = max;
	f->nr++;
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
		err = fn(ents[i]->key, ents[i]->weight, ents[i]->count, ents[i]->max, ctx);
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
