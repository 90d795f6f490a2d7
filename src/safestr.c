// SPDX-License-Identifier: GPL-2.0-only
/* Strings from other processes and files, made safe for each output: see safestr.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "safestr.h"

size_t safestr__utf8_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	/* 0xc0 and 0xc1 only start overlong forms; 0xf5 and up, beyond U+10FFFF */
	if (s[0] >= 0xc2 && s[0] < 0xe0)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] < 0xf0)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] < 0xf5)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, beyond Unicode, surrogates */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t safestr__char_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len;

	if (u[0] >= 0x20 && u[0] < 0x7f)
		return 1; /* printable ASCII: most of every name */
	len = safestr__utf8_len(s, n);

	if (len == 1)
		return u[0] >= 0x20 && u[0] != 0x7f;
	/* C1 (U+0080-U+009F: 0xc2 0x80-0x9f), which some terminals take as ESC sequences */
	if (len == 2 && u[0] == 0xc2 && u[1] < 0xa0)
		return 0;
	/* U+FFFE, U+FFFF: not characters, and not allowed in XML */
	if (len == 3 && u[0] == 0xef && u[1] == 0xbf && u[2] >= 0xbe)
		return 0;
	/*
	 * Invisible format characters that reorder or hide what follows on a
	 * terminal: U+061C, U+200B-U+200F, U+2028-U+202E, U+2060-U+206F, U+FEFF
	 */
	if ((len == 2 && u[0] == 0xd8 && u[1] == 0x9c) ||
	    (len == 3 && u[0] == 0xe2 && u[1] == 0x80 &&
	     ((u[2] >= 0x8b && u[2] <= 0x8f) || (u[2] >= 0xa8 && u[2] <= 0xae))) ||
	    (len == 3 && u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa0 && u[2] <= 0xaf) ||
	    (len == 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf))
		return 0;
	return len;
}

void safestr__hex(char out[5], unsigned char c)
{
	static const char digits[] = "0123456789abcdef";

	out[0] = '\\';
	out[1] = 'x';
	out[2] = digits[c >> 4];
	out[3] = digits[c & 15];
	out[4] = '\0';
}

size_t safestr__text(char *dst, size_t size, const char *src, size_t len)
{
	size_t pos = 0;
	bool full = !size;

	for (size_t i = 0; i < len;) {
		size_t n = safestr__char_len(src + i, len - i);
		char esc[5];
		const char *piece = src + i;
		size_t plen = n;

		if (!n) {
			safestr__hex(esc, src[i]);
			piece = esc;
			plen = 4;
			n = 1;
		}
		/* once a piece did not fit, only count */
		if (!full && pos + plen < size)
			memcpy(dst + pos, piece, plen);
		else if (!full)
			full = true, dst[pos] = '\0';
		pos += plen;
		i += n;
	}
	if (!full)
		dst[pos] = '\0';
	return pos;
}

const char *safestr__str(char *dst, size_t size, const char *src)
{
	safestr__text(dst, size, src ? src : "", src ? strlen(src) : 0);
	return dst;
}

void safestr__fput(FILE *f, const char *src, size_t len)
{
	size_t shown = 0; /* src[shown..i) is shown as it is: one write for all of it */

	for (size_t i = 0; i < len;) {
		size_t n = safestr__char_len(src + i, len - i);
		char esc[5];

		if (n) {
			i += n;
			continue;
		}
		fwrite(src + shown, 1, i - shown, f);
		safestr__hex(esc, src[i++]);
		fputs(esc, f);
		shown = i;
	}
	fwrite(src + shown, 1, len - shown, f);
}

void safestr__json(FILE *f, const char *src, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len;) {
		size_t n = safestr__char_len(src + i, len - i);
		char esc[5];

		if (n == 1 && (src[i] == '"' || src[i] == '\\')) {
			fputc('\\', f);
			fputc(src[i++], f);
		} else if (n) {
			fwrite(src + i, 1, n, f);
			i += n;
		} else {
			/* the text \xNN, its backslash escaped for JSON */
			safestr__hex(esc, src[i++]);
			fputc('\\', f);
			fputs(esc, f);
		}
	}
	fputc('"', f);
}

void safestr__xml(FILE *f, const char *src, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = safestr__char_len(src + i, len - i);
		char esc[5];

		if (!n) {
			safestr__hex(esc, src[i++]);
			fputs(esc, f);
			continue;
		}
		switch (n == 1 ? src[i] : 0) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fwrite(src + i, 1, n, f);
		}
		i += n;
	}
}
