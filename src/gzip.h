/* SPDX-License-Identifier: GPL-2.0-only */
/* gzip files with zlib, whole in memory: what pprof files and saved recordings are. */
#ifndef WPROF_GZIP_H
#define WPROF_GZIP_H

#include <stddef.h>
#include <stdio.h>

/* @buf (@len bytes) gzip-compressed to @f, flushed. 0, -ENOMEM, or -errno / -EIO. */
int gzip__write(const void *buf, size_t len, FILE *f);

/* Whether @buf starts with gzip's magic bytes. */
int gzip__is_gzip(const void *buf, size_t len);

/* The first bytes (up to @n) the gzip file @in decompresses to, into @out: how many. */
size_t gzip__head(const void *in, size_t len, void *out, size_t n);

/*
 * Decompress the gzip file @in (@len bytes) into *@out (malloc'd, *@out_len
 * bytes), refusing to produce more than @max bytes. 0; -ENOMSG when @in is
 * not gzip; -ENODATA when it ends early; -EBADMSG when it is corrupt (a bad
 * checksum, bytes after its end); -EFBIG past @max; -ENOMEM.
 */
int gzip__read(const void *in, size_t len, size_t max, void **out, size_t *out_len);

#endif /* WPROF_GZIP_H */
