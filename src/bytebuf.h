/* SPDX-License-Identifier: GPL-2.0-only */
/* A growable byte buffer whose out-of-memory is sticky, checked once at the end. */
#ifndef WPROF_BYTEBUF_H
#define WPROF_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>

struct bytebuf {
	unsigned char *p;
	size_t len, cap;
	bool oom; /* once set, everything else is a no-op: checked once at the end */
};

/* Append @n bytes of @d (nothing once out of memory). */
void bytebuf__put(struct bytebuf *b, const void *d, size_t n);

#endif /* WPROF_BYTEBUF_H */
