// SPDX-License-Identifier: GPL-2.0-only
/* gzip in memory with zlib, for pprof files and saved recordings: see gzip.h. */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "gzip.h"

/* zlib's gzip wrapper: windowBits 15 + 16 */
#define GZIP_WBITS (15 + 16)

int gzip__write(const void *buf, size_t len, FILE *f)
{
	z_stream z = {};
	unsigned char *out;
	uLong bound;
	int ret;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, len);
	out = malloc(bound);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)buf;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = bound;
	ret = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(out);
		return -EIO;
	}
	ret = fwrite(out, 1, z.total_out, f) == z.total_out && !fflush(f) && !ferror(f) ? 0 :
	      errno ? -errno : -EIO;
	free(out);
	return ret;
}

int gzip__is_gzip(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

size_t gzip__head(const void *in, size_t len, void *out, size_t n)
{
	z_stream z = {};
	size_t got;

	if (!gzip__is_gzip(in, len) || inflateInit2(&z, GZIP_WBITS) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = n;
	inflate(&z, Z_SYNC_FLUSH);
	got = z.total_out;
	inflateEnd(&z);
	return got;
}

int gzip__read(const void *in, size_t len, size_t max, void **out, size_t *out_len)
{
	z_stream z = {};
	unsigned char *buf = NULL;
	size_t cap = 0;
	int ret, err = 0;

	*out = NULL;
	*out_len = 0;
	if (!gzip__is_gzip(in, len))
		return -ENOMSG;
	if (inflateInit2(&z, GZIP_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)in;
	z.avail_in = len;
	do {
		if (z.total_out == cap) {
			size_t ncap = cap ? 2 * cap : 64 * 1024;
			unsigned char *n;

			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			ncap = ncap > max ? max : ncap;
			n = realloc(buf, ncap);
			if (!n) {
				err = -ENOMEM;
				break;
			}
			buf = n;
			cap = ncap;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = cap - z.total_out;
		ret = inflate(&z, Z_NO_FLUSH);
		if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_STREAM_ERROR)
			err = -EBADMSG;
		else if (ret == Z_MEM_ERROR)
			err = -ENOMEM;
		/* no progress possible: the input ended before the stream did */
		else if (ret == Z_BUF_ERROR || (ret == Z_OK && !z.avail_in && z.avail_out))
			err = -ENODATA;
	} while (!err && ret != Z_STREAM_END);
	if (!err && z.avail_in)
		err = -EBADMSG; /* bytes after the end: another member, or garbage */
	*out_len = z.total_out;
	inflateEnd(&z);
	if (err) {
		free(buf);
		*out_len = 0;
		return err;
	}
	*out = buf;
	return 0;
}
