// SPDX-License-Identifier: GPL-2.0-only
/* Linear probing at a load factor of at most 1/2, no deletion, as hmap.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "strmap.h"

struct strmap_slot {
	char *key; /* NULL: empty */
	size_t len;
	__u64 hash;
	__u64 val;
};

struct strmap {
	struct strmap_slot *slots;
	size_t cap; /* a power of 2 */
	size_t nr;
};

struct strmap *strmap__new(void)
{
	struct strmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cap = 256;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void strmap__free(struct strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	free(m);
}

size_t strmap__nr(const struct strmap *m)
{
	return m->nr;
}

static struct strmap_slot *slot_of(struct strmap_slot *slots, size_t cap, const void *key,
				   size_t len, __u64 hash)
{
	size_t mask = cap - 1, i = hash & mask;

	for (;; i = (i + 1) & mask) {
		struct strmap_slot *s = &slots[i];

		if (!s->key || (s->hash == hash && s->len == len && !memcmp(s->key, key, len)))
			return s;
	}
}

int strmap__get(const struct strmap *m, const void *key, size_t len, __u64 *out)
{
	struct strmap_slot *s = slot_of(m->slots, m->cap, key, len, hmap__hash_bytes(key, len));

	if (!s->key)
		return -ENOENT;
	*out = s->val;
	return 0;
}

static int grow(struct strmap *m)
{
	size_t cap = m->cap * 2;
	struct strmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct strmap_slot *s = &m->slots[i];

		if (s->key)
			*slot_of(slots, cap, s->key, s->len, s->hash) = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int strmap__intern(struct strmap *m, const void *key, size_t len, __u64 val, __u64 *out)
{
	__u64 hash = hmap__hash_bytes(key, len);
	struct strmap_slot *s = slot_of(m->slots, m->cap, key, len, hash);

	if (s->key) {
		*out = s->val;
		return 0;
	}
	if ((m->nr + 1) * 2 > m->cap) {
		if (grow(m))
			return -ENOMEM;
		s = slot_of(m->slots, m->cap, key, len, hash);
	}
	s->key = malloc(len + 1);
	if (!s->key)
		return -ENOMEM;
	memcpy(s->key, key, len);
	s->key[len] = '\0';
	s->len = len;
	s->hash = hash;
	s->val = val;
	m->nr++;
	*out = val;
	return 1;
}
