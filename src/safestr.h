/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Strings wprof did not write itself -- thread and process names, command
 * lines, file and symbol names, whatever a saved recording holds -- made
 * safe for where they are written, by one rule for every output:
 *
 *	valid UTF-8 is shown as it is; each byte of a control character (C0,
 *	DEL, C1, raw or encoded as UTF-8), of U+FFFE or U+FFFF (which XML
 *	refuses), of an invisible format character that reorders or hides text
 *	(bidi controls, zero-width ones, line and paragraph separators, the
 *	BOM), or that is not part of valid UTF-8 (a stray byte, 0xf5-0xff, an
 *	overlong form, a surrogate, a character cut short) is shown as the
 *	four characters \xNN (lowercase hex).
 *
 * The result is valid UTF-8 that no terminal acts on, and escaping it
 * again changes nothing, so a writer may escape what a line already holds.
 * A backslash stays as it is: the text is for people and parsers of JSON,
 * XML and protobuf, not a reversible encoding. Each output adds its own
 * syntax: folded frames turn ';' into ':', the thread table ' ' into '_',
 * JSON and XML escape their quotes and markup.
 */
#ifndef WPROF_SAFESTR_H
#define WPROF_SAFESTR_H

#include <stddef.h>
#include <stdio.h>

/* The most bytes @n bytes take once escaped, with the NUL. */
#define SAFESTR_SIZE(n) (4 * (n) + 1)

/*
 * Length (1-4) of the valid UTF-8 character at @s (@n > 0 bytes left), 0
 * when @s does not start one: the one validator of every writer.
 */
size_t safestr__utf8_len(const char *s, size_t n);

/*
 * Length (1-4) of the character at @s (@n > 0 bytes left) when it is shown
 * as it is, 0 when its first byte is to be escaped.
 */
size_t safestr__char_len(const char *s, size_t n);

/* The escape of byte @c: "\xNN" in @out, NUL-terminated. */
void safestr__hex(char out[5], unsigned char c);

/*
 * @src (@len bytes) as safe text into @dst (@size bytes; NUL-terminated when
 * @size > 0), cut before the first character or escape that does not fit.
 * Returns the length of the whole text, as snprintf() does: @size or more
 * when it was cut. @dst may be NULL when @size is 0.
 */
size_t safestr__text(char *dst, size_t size, const char *src, size_t len);

/* The same, of a NUL-terminated @src (NULL is ""). Returns @dst. */
const char *safestr__str(char *dst, size_t size, const char *src);

/* @src (@len bytes) as safe text to @f. */
void safestr__fput(FILE *f, const char *src, size_t len);

/* @src (@len bytes) as a JSON string, quotes included, that holds its safe text. */
void safestr__json(FILE *f, const char *src, size_t len);

/* @src (@len bytes) as XML character data or attribute value: its safe text, markup escaped. */
void safestr__xml(FILE *f, const char *src, size_t len);

#endif /* WPROF_SAFESTR_H */
