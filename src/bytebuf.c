// SPDX-License-Identifier: GPL-2.0-only
/* A growable byte buffer whose out-of-memory is sticky: see bytebuf.h. */
#include <stdlib.h>
#include <string.h>

#include "bytebuf.h"

void bytebuf__put(struct bytebuf *b, const void *d, size_t n)
{
	if (b->oom || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}
