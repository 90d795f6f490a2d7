// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/safestr.c, the one rule for strings wprof did not write: the UTF-8
 * validator agrees with the table of well-formed byte sequences of the
 * Unicode standard (Table 3-7) on every input of up to three bytes and on
 * four-byte ones around every boundary; hostile names (terminal escapes,
 * newlines, DEL, C1 raw and in UTF-8, overlong forms, surrogates, 0xf5-0xff,
 * characters cut short) come out as \xNN, valid text of every length
 * unchanged, and escaping twice changes nothing; JSON and XML add only their
 * own escapes. Then a recording whose every string is hostile -- thread and
 * process names, command lines, the target, the notes, file names, frames,
 * one line without a tag whose "ids" would be JSON -- is saved and read
 * back, as another user's file would be, and every format and the summary
 * it writes are valid UTF-8 without a control character but the newline
 * (checked here by the table, not by safestr.c), with no forged line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gzip.h"
#include "output.h"
#include "recfile.h"
#include "recline.h"
#include "report.h"
#include "safestr.h"
#include "unit.h"
#include "util.h"

/* Table 3-7: the length of the well-formed sequence at @s (@n bytes), 0 if none. */
static size_t ref_len(const unsigned char *s, size_t n)
{
	static const struct {
		unsigned char lo[4], hi[4];
		size_t len;
	} rows[] = {
		{ { 0x00 }, { 0x7f }, 1 },
		{ { 0xc2, 0x80 }, { 0xdf, 0xbf }, 2 },
		{ { 0xe0, 0xa0, 0x80 }, { 0xe0, 0xbf, 0xbf }, 3 },
		{ { 0xe1, 0x80, 0x80 }, { 0xec, 0xbf, 0xbf }, 3 },
		{ { 0xed, 0x80, 0x80 }, { 0xed, 0x9f, 0xbf }, 3 },
		{ { 0xee, 0x80, 0x80 }, { 0xef, 0xbf, 0xbf }, 3 },
		{ { 0xf0, 0x90, 0x80, 0x80 }, { 0xf0, 0xbf, 0xbf, 0xbf }, 4 },
		{ { 0xf1, 0x80, 0x80, 0x80 }, { 0xf3, 0xbf, 0xbf, 0xbf }, 4 },
		{ { 0xf4, 0x80, 0x80, 0x80 }, { 0xf4, 0x8f, 0xbf, 0xbf }, 4 },
	};

	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		size_t k;

		if (rows[r].len > n)
			continue;
		for (k = 0; k < rows[r].len; k++)
			if (s[k] < rows[r].lo[k] || s[k] > rows[r].hi[k])
				break;
		if (k == rows[r].len)
			return k;
	}
	return 0;
}

/*
 * @s (@len bytes) is well-formed UTF-8 holding no control character (C0 but
 * those in @allowed, DEL, C1) and neither U+FFFE nor U+FFFF. On failure,
 * *@at is the offset of the first bad byte.
 */
static bool ref_clean(const char *s, size_t len, const char *allowed, size_t *at)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = ref_len(u + i, len - i);
		bool ctl = n == 1 && (u[i] == 0x7f || (u[i] < 0x20 && !strchr(allowed, u[i])));
		bool bad = !n || ctl || (n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) ||
			   (n == 3 && u[i] == 0xef && u[i + 1] == 0xbf && u[i + 2] >= 0xbe);

		if (bad || (n == 1 && !u[i])) {
			*at = i;
			return false;
		}
		i += n;
	}
	return true;
}

static void test_validator(void)
{
	static const unsigned char tails[] = { 0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
					       0xa0, 0xbf, 0xc0, 0xf4, 0xff };
	size_t wrong = 0, checked = 0;
	unsigned char s[4];

	/* every sequence of one, two and three bytes, each cut short too */
	for (unsigned int v = 0; v < 1 << 24; v++) {
		s[0] = v >> 16, s[1] = v >> 8, s[2] = v;
		for (size_t n = 1; n <= 3; n++, checked++)
			wrong += safestr__utf8_len((char *)s, n) != ref_len(s, n);
	}
	/* four bytes: every first two, the others around the boundaries */
	for (unsigned int v = 0; v < 1 << 16; v++)
		for (size_t c = 0; c < ARRAY_SIZE(tails); c++)
			for (size_t d = 0; d < ARRAY_SIZE(tails); d++, checked++) {
				s[0] = v >> 8, s[1] = v, s[2] = tails[c], s[3] = tails[d];
				wrong += safestr__utf8_len((char *)s, 4) != ref_len(s, 4);
			}
	CHECK_EQ_U64(wrong, 0, "the validator agrees with Unicode's Table 3-7 on %zu inputs",
		     checked);
}

/* Safe text of @in (@len bytes). */
static const char *text(const char *in, size_t len)
{
	static char buf[512];

	safestr__text(buf, sizeof(buf), in, len);
	return buf;
}

#define TEXT(lit) text(lit, sizeof(lit) - 1)

static void test_text(void)
{
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "\033]0;pwned\007", "\\x1b]0;pwned\\x07", "ESC ] 0 ; ... BEL: a title" },
		{ "\033[2J", "\\x1b[2J", "ESC [ 2 J: clear the screen" },
		{ "x\nwprof: forged", "x\\x0awprof: forged", "a newline: no second line" },
		{ "a\rb\tc", "a\\x0db\\x09c", "CR and tab" },
		{ "del\x7f", "del\\x7f", "DEL" },
		{ "\x80\x85\x9b\x9f", "\\x80\\x85\\x9b\\x9f", "raw C1 bytes" },
		{ "\xc2\x80\xc2\x9b\xc2\x9f", "\\xc2\\x80\\xc2\\x9b\\xc2\\x9f", "C1 in UTF-8" },
		{ "\xc2\xa0", "\xc2\xa0", "U+00A0, the first after C1, is kept" },
		{ "\xc0\xaf", "\\xc0\\xaf", "overlong '/' in two bytes" },
		{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf", "overlong '/' in three bytes" },
		{ "\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf", "overlong '/' in four bytes" },
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80", "a surrogate (U+D800)" },
		{ "\xed\xbf\xbf", "\\xed\\xbf\\xbf", "a surrogate (U+DFFF)" },
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF" },
		{ "\xf5\xf8\xfc\xfe\xff", "\\xf5\\xf8\\xfc\\xfe\\xff", "0xf5-0xff" },
		{ "\xef\xbf\xbe\xef\xbf\xbf", "\\xef\\xbf\\xbe\\xef\\xbf\\xbf", "U+FFFE, U+FFFF" },
		{ "ab\xe2\x82", "ab\\xe2\\x82", "a character cut short at the end" },
		{ "ab\xf0\x9f\x98", "ab\\xf0\\x9f\\x98", "a four-byte one cut short" },
		{ "\xe2\x82x", "\\xe2\\x82x", "cut short before ASCII" },
		{ "caf\xc3\xa9", "caf\xc3\xa9", "e acute passes" },
		{ "\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87", "CJK passes" },
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "an emoji passes" },
		{ "\xef\xbf\xbd", "\xef\xbf\xbd", "U+FFFD passes" },
		{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "U+10FFFF passes" },
		{ "a\\x1b b;c", "a\\x1b b;c", "backslash, space, ';' as they are" },
		{ "gpj.\xe2\x80\xae" "exe", "gpj.\\xe2\\x80\\xaeexe", "U+202E, right-to-left override" },
		{ "\xe2\x81\xa6x\xe2\x81\xa9", "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9",
		  "U+2066, U+2069: bidi isolates" },
		{ "a\xe2\x80\x8b" "b\xe2\x80\xa8", "a\\xe2\\x80\\x8bb\\xe2\\x80\\xa8",
		  "zero-width space, line separator" },
		{ "\xef\xbb\xbfx\xd8\x9c", "\\xef\\xbb\\xbfx\\xd8\\x9c", "BOM, Arabic letter mark" },
		{ "\xe2\x80\x90\xe2\x80\xb0", "\xe2\x80\x90\xe2\x80\xb0",
		  "U+2010 hyphen, U+2030 per mille pass" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = text(cases[i].in, strlen(cases[i].in));

		CHECK_STREQ(got, cases[i].want, "%s", cases[i].what);
		CHECK_STREQ(text(got, strlen(got)), got, "%s: escaping again changes nothing",
			    cases[i].what);
	}
	CHECK_STREQ(TEXT("a\0b"), "a\\x00b", "a NUL inside a counted string");
}

static void test_cut(void)
{
	char buf[8];

	CHECK_EQ_U64(safestr__text(NULL, 0, "a\033", 2), 5, "the length, counted without a buffer");
	CHECK_EQ_U64(safestr__text(buf, sizeof(buf), "abc\033[2J", 7), 10, "the whole length");
	CHECK_STREQ(buf, "abc\\x1b", "an escape that fits exactly");
	safestr__text(buf, sizeof(buf), "abcd\033", 5);
	CHECK_STREQ(buf, "abcd", "an escape is not split");
	safestr__text(buf, sizeof(buf), "abcde\xe2\x82\xac", 8);
	CHECK_STREQ(buf, "abcde", "a character is not split");
	safestr__text(buf, sizeof(buf), "abcdefgh\033", 9);
	CHECK_STREQ(buf, "abcdefg", "nothing after a cut, though it would fit");
	memset(buf, 'z', sizeof(buf));
	safestr__text(buf, 1, "abc", 3);
	CHECK(buf[0] == '\0' && buf[1] == 'z', "size 1 writes only the NUL");
	CHECK_STREQ(safestr__str(buf, sizeof(buf), NULL), "", "NULL is empty");
}

/* What @fn writes of @in. */
static char *written_by(void (*fn)(FILE *, const char *, size_t), const char *in, size_t len)
{
	static char out[512];
	FILE *f = fmemopen(out, sizeof(out), "w");

	if (!f)
		return strcpy(out, "(fmemopen failed)");
	fn(f, in, len);
	fclose(f);
	return out;
}

#define WRITTEN(fn, lit) written_by(fn, lit, sizeof(lit) - 1)

static void test_writers(void)
{
	CHECK_STREQ(WRITTEN(safestr__fput, "t\033]0;x\007\xc3\xa9\xff"),
		    "t\\x1b]0;x\\x07\xc3\xa9\\xff", "fput: as text");
	CHECK_STREQ(WRITTEN(safestr__json, "q\"b\\\n\xc2\x9b\xf0\x9f\x98\x80\xed\xa0\x80"),
		    "\"q\\\"b\\\\\\\\x0a\\\\xc2\\\\x9b\xf0\x9f\x98\x80\\\\xed\\\\xa0\\\\x80\"",
		    "json: quotes and backslashes escaped, the text's \\xNN a JSON \\\\xNN");
	CHECK_STREQ(WRITTEN(safestr__json, ""), "\"\"", "json: the empty string");
	CHECK_STREQ(WRITTEN(safestr__xml, "<a href=\"x\">&'\033\xef\xbf\xbe\xc3\xa9"),
		    "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\\x1b\\xef\\xbf\\xbe\xc3\xa9",
		    "xml: markup escaped, no control and no U+FFFE");
}

/* ---- a recording of hostile strings, saved and read back ---- */

#define FORGED "\nwprof: forged"

static const char *const hostile_lines[] = {
	"on-cpu;100;101;\033]0;t\007" FORGED ";main\xc2\x9b;burn\xff",
	"off-cpu:sleep;100;102;\033[2J\x7f\r;wait\xed\xa0\x80;f\xe0\x80\xaf",
	/* no tag: its "ids" are text, which JSON must not take as its own */
	"x;1, \"forged\": 2;3;c;f",
};

static void make_hostile(struct recording *r)
{
	static const struct thread_acct th[] = {
		{ .pid = 100, .tid = 101, .comm = "\007" FORGED, .pcomm = "\x9b\x31m",
		  .wall_ns = 2000000, .on_ns = 2000000, .wall_us = 2000, .on_us = 2000,
		  .samples = 3, .selected = true },
		{ .pid = 100, .tid = 102, .comm = "\033[2J\x7f\r\xc2\x9b\xf5", .pcomm = "\x9b\x31m",
		  .wall_ns = 2000000, .wall_us = 2000, .blocks = 1, .max_block_ns = 2000000,
		  .selected = true },
	};

	memset(r, 0, sizeof(*r));
	snprintf(r->info.target, sizeof(r->info.target), "pid 100 (\033]0;x\007" FORGED ")");
	snprintf(r->info.program, sizeof(r->info.program), "\033[2J\xff");
	r->info.window_ns = r->prof.window_ns = 2000000;
	r->info.period_ns = r->prof.period_ns = 10101010;
	r->info.freq_hz = 99;
	r->cmdline = strdup("wprof record \033[2J");
	/* lines of their own: a file's may say anything, but act on no terminal */
	r->notes = strdup("wprof: frames without symbol names, by file: \033]0;n\007 3\r "
			  "notes\xc2\x9b\n");
	r->ids = true;
	r->procs = calloc(1, sizeof(*r->procs));
	r->procs[0] = (struct rec_proc){ .pid = 100, .cmdline = strdup("\033]2;c\007" FORGED
									 " cmd\xe0\x80\xaf") };
	r->nr_procs = 1;
	r->prof.threads = malloc(sizeof(th));
	memcpy(r->prof.threads, th, sizeof(th));
	r->prof.threads[1].off_ns[WPROF_OFF_SLEEP] = 2000000;
	r->prof.threads[1].off_us[WPROF_OFF_SLEEP] = 2000;
	r->prof.nr_threads = ARRAY_SIZE(th);
	origins__add(&r->prof.origins, "/tmp/\033]0;lib\007" FORGED ".so\xff", "");
	origins__note(&r->prof.origins, ORIGIN_ANY_PID, "main\\xc2\\x9b", 12, 0);
	r->lines = folded__new();
	for (size_t i = 0; i < ARRAY_SIZE(hostile_lines); i++) {
		struct rec_splitter sp = {};

		rec_splitter__add(&sp, r->lines, hostile_lines[i], strlen(hostile_lines[i]), 0, 0,
				  1000, 1, 1000);
		rec_splitter__free(&sp);
	}
}

/* What @r writes in @format (-1: the summary), malloc'd. */
static char *written(struct recording *r, int format, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int err = 0;

	if (!f)
		return NULL;
	if (format < 0)
		report__summary(r, f, true);
	else
		err = output__write(r, format, f);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The strings of a gzipped profile.proto: field 6 of the top level. */
static bool pprof_strings_clean(const char *gz, size_t gz_len, size_t *nr, size_t *bad)
{
	void *raw;
	size_t len;
	const unsigned char *p, *end;

	*nr = *bad = 0;
	if (gzip__read(gz, gz_len, 1 << 26, &raw, &len))
		return false;
	p = raw;
	end = p + len;
	while (p < end) {
		__u64 key = 0, v = 0;
		size_t at;

		for (int s = 0; p < end; s += 7) {
			key |= (__u64)(*p & 0x7f) << s;
			if (!(*p++ & 0x80))
				break;
		}
		for (int s = 0; p < end; s += 7) {
			v |= (__u64)(*p & 0x7f) << s;
			if (!(*p++ & 0x80))
				break;
		}
		if ((key & 7) == 2) {
			if (v > (__u64)(end - p))
				break;
			if (key >> 3 == 6) {
				(*nr)++;
				*bad += !ref_clean((const char *)p, v, "", &at);
			}
			p += v;
		} else if ((key & 7) != 0) {
			break;
		}
	}
	free(raw);
	return p == end;
}

/* The target, the command line, a thread's name and the notes, in the summary */
static const char *const summary_has[] = {
	"(\\x1b]0;x\\x07\\x0awprof: forged)",
	"(\\x1b]2;c\\x07\\x0awprof: forged cmd\\xe0\\x80\\xaf)",
	"tid 101 (\\x07\\x0awprof: forged)",
	"by file: \\x1b]0;n\\x07 3\\x0d notes\\xc2\\x9b\n",
};

static void test_hostile_recording(void)
{
	static const struct {
		int format;
		const char *name, *allowed;
	} outs[] = {
		{ FORMAT_FOLDED, "folded", "\n" }, { FORMAT_JSON, "json", "\n" },
		{ FORMAT_THREADS, "threads", "\n" }, { FORMAT_SVG, "svg", "\n\t" },
		{ -1, "summary", "\n" },
	};
	struct recording a, b;
	char why[256], *file, *out;
	size_t len, nr = 0, bad = 0, at = 0;
	bool clean;
	int err;

	make_hostile(&a);
	file = written(&a, FORMAT_WPROF, &len);
	err = file ? recfile__parse(file, len, &b, why, sizeof(why)) : -ENOMEM;
	free(file);
	recording__free(&a);
	if (!CHECK_EQ_S64(err, 0, "the hostile recording saved and read back (%s)",
			  err ? why : "ok"))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(outs); i++) {
		out = written(&b, outs[i].format, &len);
		if (!CHECK(out, "%s: written", outs[i].name))
			continue;
		clean = ref_clean(out, len, outs[i].allowed, &at);
		snprintf(why, sizeof(why), "bad at %zu: \"%.40s\"", at, out + (clean ? 0 : at));
		unit_report(clean, __func__, why, "%s: valid UTF-8, no control character (%zu bytes)",
			    outs[i].name, len);
		CHECK(!strstr(out, FORGED), "%s: no line made by a name", outs[i].name);
		if (outs[i].format == FORMAT_JSON)
			CHECK(!strstr(out, "\"forged\"") && strstr(out, "\"pid\": 0, \"tid\": 0"),
			      "json: a line's text is no JSON key, its ids numbers");
		for (size_t k = 0; outs[i].format == -1 && k < ARRAY_SIZE(summary_has); k++)
			CHECK(strstr(out, summary_has[k]), "summary: has %s", summary_has[k]);
		free(out);
	}
	out = written(&b, FORMAT_PPROF, &len);
	clean = out && pprof_strings_clean(out, len, &nr, &bad);
	CHECK(clean && nr > 10 && !bad, "pprof: %zu strings, %zu not valid UTF-8 free of controls",
	      nr, bad);
	free(out);
	recording__free(&b);
}

int main(void)
{
	test_validator();
	test_text();
	test_cut();
	test_writers();
	test_hostile_recording();
	return unit_done();
}
