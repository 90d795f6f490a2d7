// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of src/folded.c: sanitizer, aggregation, writer, strict parser. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "folded.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Everything folded__write() produced, as one NUL-terminated string (caller frees). */
static char *write_to_string(const struct folded *f, int *err)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	out = open_memstream(&text, &size);
	if (!out) {
		*err = -errno;
		return NULL;
	}
	*err = folded__write(f, out);
	fclose(out);
	return text;
}

/*
 * Run every line of @text through the strict parser. Returns the number of
 * lines, and the sum of their weights in *@sum; -1 if a line does not parse.
 */
static long parse_all(const char *text, __u64 *sum, const char *test)
{
	const char *p = text, *nl;
	long nr = 0;

	*sum = 0;
	for (; *p; p = nl + 1) {
		char line[256 * 1024];
		__u64 w;
		size_t n;

		nl = strchr(p, '\n');
		if (!nl || (size_t)(nl - p) >= sizeof(line)) {
			unit_report(false, test, "line without '\\n' or too long", "line %ld ends", nr + 1);
			return -1;
		}
		memcpy(line, p, nl - p);
		line[nl - p] = '\0';
		if (folded__parse_line(line, &n, &w)) {
			unit_report(false, test, line, "line %ld parses", nr + 1);
			return -1;
		}
		*sum += w;
		nr++;
	}
	return nr;
}

static void test_sanitize(void)
{
	char buf[64], small[8];

	folded__sanitize(buf, sizeof(buf), "ns::f<a;b>(int)");
	CHECK_STREQ(buf, "ns::f<a:b>(int)", "';' becomes ':'");
	folded__sanitize(buf, sizeof(buf), "a\nb\rc\td");
	CHECK_STREQ(buf, "a\\x0ab\\x0dc\\x09d", "newline, CR and tab are shown as \\xNN");
	folded__sanitize(buf, sizeof(buf), "x\001\037\177y");
	CHECK_STREQ(buf, "x\\x01\\x1f\\x7fy", "other control characters and DEL too");
	folded__sanitize(buf, sizeof(buf), "c1\x9b;\xc2\x9b;\xff");
	CHECK_STREQ(buf, "c1\\x9b:\\xc2\\x9b:\\xff", "C1, raw or in UTF-8, and invalid UTF-8 too");
	folded__sanitize(buf, sizeof(buf), "");
	CHECK_STREQ(buf, "[empty]", "empty name");
	folded__sanitize(buf, sizeof(buf), NULL);
	CHECK_STREQ(buf, "[empty]", "NULL name");
	folded__sanitize(buf, sizeof(buf), "operator new(unsigned long)");
	CHECK_STREQ(buf, "operator new(unsigned long)", "spaces are kept");
	folded__sanitize(buf, sizeof(buf), "caf\xc3\xa9");
	CHECK_STREQ(buf, "caf\xc3\xa9", "UTF-8 is kept");

	folded__sanitize(small, sizeof(small), "abcdefghij");
	CHECK_STREQ(small, "abcdefg", "too long ASCII is cut to size - 1");
	/* "abcde" + 'é' (2 bytes) = 7 bytes fits exactly; one more byte must not split it. */
	folded__sanitize(small, sizeof(small), "abcde\xc3\xa9");
	CHECK_STREQ(small, "abcde\xc3\xa9", "UTF-8 name that fits exactly");
	folded__sanitize(small, sizeof(small), "abcdef\xc3\xa9");
	CHECK_STREQ(small, "abcdef", "UTF-8 character is not split");
	folded__sanitize(small, sizeof(small), "abcd\xe2\x82\xac\xe2\x82\xac");
	CHECK_STREQ(small, "abcd\xe2\x82\xac", "3-byte UTF-8 character is not split");
	folded__sanitize(small, sizeof(small), "abc\x1b[2J");
	CHECK_STREQ(small, "abc\\x1b", "an escape that fits exactly");
	folded__sanitize(small, sizeof(small), "abcd\x1b[2J");
	CHECK_STREQ(small, "abcd", "an escape is not split");

	memset(small, 'z', sizeof(small));
	folded__sanitize(small, 1, "abc");
	CHECK(small[0] == '\0' && small[1] == 'z', "size 1 writes only the NUL");
	folded__sanitize(small, 0, "abc");
	CHECK(small[0] == '\0' && small[1] == 'z', "size 0 writes nothing");
}

static void test_merge(void)
{
	const char *s1[] = { "on-cpu", "app", "main", "work" };
	const char *s2[] = { "on-cpu", "app", "main", "idle" };
	const char *s3[] = { "on-cpu", "app", "main" };
	struct folded *f = folded__new();
	char *text;
	int err;

	if (!CHECK(f, "folded__new"))
		return;
	CHECK_EQ_S64(folded__add(f, s1, 4, 10), 0, "add first stack");
	CHECK_EQ_S64(folded__add(f, s2, 4, 5), 0, "add second stack");
	CHECK_EQ_S64(folded__add(f, s1, 4, 7), 0, "add first stack again");
	CHECK_EQ_S64(folded__add(f, s3, 3, 1), 0, "add a prefix of the first stack");
	CHECK_EQ_U64(folded__nr(f), 3, "identical stacks merge, a prefix does not");

	text = write_to_string(f, &err);
	CHECK_EQ_S64(err, 0, "write");
	CHECK_STREQ(text,
		    "on-cpu;app;main 1\n"
		    "on-cpu;app;main;idle 5\n"
		    "on-cpu;app;main;work 17\n",
		    "weights summed, lines sorted");
	free(text);
	folded__free(f);
}

static void test_sanitized_frames(void)
{
	const char *semi[] = { "t", "a;b" };
	const char *colon[] = { "t", "a:b" };
	const char *two[] = { "t", "a", "b" };
	const char *ctl[] = { "t", "line1\nline2", "\ttabbed\r", "" };
	const char *nul[] = { "t", NULL };
	struct folded *f = folded__new();
	__u64 sum;
	char *text;
	int err;

	if (!CHECK(f, "folded__new"))
		return;
	folded__add(f, semi, 2, 1);
	folded__add(f, colon, 2, 2);
	folded__add(f, two, 3, 4);
	folded__add(f, ctl, 4, 8);
	folded__add(f, nul, 2, 16);
	CHECK_EQ_U64(folded__nr(f), 4, "\"a;b\" merges with \"a:b\", not with \"a\",\"b\"");

	text = write_to_string(f, &err);
	CHECK_EQ_S64(err, 0, "write");
	CHECK_STREQ(text,
		    "t;[empty] 16\n"
		    "t;a:b 3\n"
		    "t;a;b 4\n"
		    "t;line1\\x0aline2;\\x09tabbed\\x0d;[empty] 8\n",
		    "sanitized output");
	CHECK_EQ_S64(parse_all(text, &sum, __func__), 4, "every line parses");
	CHECK_EQ_U64(sum, 31, "total weight kept");
	free(text);
	folded__free(f);
}

static void test_long_names(void)
{
	size_t n = 100 * 1024;
	char *name = malloc(n + 1);
	const char *frames[3];
	struct folded *f = folded__new();
	char *text, *want;
	__u64 sum;
	int err;

	if (!CHECK(f && name, "allocations"))
		goto out;
	memset(name, 'x', n);
	name[n] = '\0';
	name[n / 2] = ';'; /* sanitized in the middle of a huge name too */
	frames[0] = "t";
	frames[1] = name;
	frames[2] = name;
	CHECK_EQ_S64(folded__add(f, frames, 3, 42), 0, "add 2 frames of 100 KiB");
	CHECK_EQ_S64(folded__add(f, frames, 3, 1), 0, "add them again");

	text = write_to_string(f, &err);
	CHECK_EQ_S64(err, 0, "write");
	CHECK_EQ_U64(text ? strlen(text) : 0, 2 + 2 * (n + 1) + 3, "names are not truncated");
	CHECK_EQ_S64(parse_all(text, &sum, __func__), 1, "the line parses");
	CHECK_EQ_U64(sum, 43, "weights merged");
	want = strchr(text, ':');
	CHECK(want && want - text == (long)(2 + n / 2), "';' in a long name became ':'");
	free(text);
out:
	free(name);
	folded__free(f);
}

static void test_weights(void)
{
	const char *zero[] = { "zero" };
	const char *max[] = { "max" };
	const char *sat[] = { "sat" };
	struct folded *f = folded__new();
	char *text;
	int err;

	if (!CHECK(f, "folded__new"))
		return;
	folded__add(f, zero, 1, 0);
	folded__add(f, max, 1, UINT64_MAX);
	folded__add(f, sat, 1, UINT64_MAX - 1);
	folded__add(f, sat, 1, 5);
	text = write_to_string(f, &err);
	CHECK_EQ_S64(err, 0, "write");
	CHECK_STREQ(text,
		    "max 18446744073709551615\n"
		    "sat 18446744073709551615\n"
		    "zero 0\n",
		    "weight 0, u64 max, and a sum saturating instead of wrapping");
	free(text);
	folded__free(f);
}

static void test_sort_order(void)
{
	/* Added in reverse; bytewise order puts uppercase first and a prefix before its children. */
	const char *names[] = { "b;z", "b", "a;c", "a;b", "B", "A" };
	struct folded *f = folded__new();
	char *text;
	size_t i;
	int err;

	if (!CHECK(f, "folded__new"))
		return;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const char *frames[3];
		char *dup = strdup(names[i]), *semi = strchr(dup, ';');
		size_t nr = 1;

		frames[0] = dup;
		if (semi) {
			*semi = '\0';
			frames[nr++] = semi + 1;
		}
		folded__add(f, frames, nr, i);
		free(dup);
	}
	text = write_to_string(f, &err);
	CHECK_EQ_S64(err, 0, "write");
	CHECK_STREQ(text, "A 5\nB 4\na;b 3\na;c 2\nb 1\nb;z 0\n", "bytewise sorted");
	free(text);

	/* Same stacks, different insertion order and table history: same bytes out. */
	folded__free(f);
	f = folded__new();
	for (i = ARRAY_SIZE(names); i-- > 0;) {
		const char *frames[3];
		char *dup = strdup(names[i]), *semi = strchr(dup, ';');
		size_t nr = 1;

		frames[0] = dup;
		if (semi) {
			*semi = '\0';
			frames[nr++] = semi + 1;
		}
		folded__add(f, frames, nr, i);
		free(dup);
	}
	text = write_to_string(f, &err);
	CHECK_STREQ(text, "A 5\nB 4\na;b 3\na;c 2\nb 1\nb;z 0\n", "independent of insertion order");
	free(text);
	folded__free(f);
}

static void test_errors(void)
{
	const char *frames[] = { "a" };
	struct folded *f = folded__new();
	FILE *full;

	if (!CHECK(f, "folded__new"))
		return;
	CHECK_EQ_S64(folded__add(f, frames, 0, 1), -EINVAL, "a stack without frames is refused");
	CHECK_EQ_U64(folded__nr(f), 0, "nothing added");
	folded__add(f, frames, 1, 1);

	/* /dev/full fails every write with ENOSPC, seen at the latest by the flush. */
	full = fopen("/dev/full", "w");
	if (full) {
		CHECK_EQ_S64(folded__write(f, full), -ENOSPC, "write error is named: -ENOSPC");
		fclose(full);
	} else {
		CHECK(false, "open /dev/full");
	}
	folded__free(f);
	folded__free(NULL);
	CHECK(true, "folded__free(NULL) is a no-op");
}

/* 200k distinct stacks, each added twice: exercises growth and merging at scale. */
static void test_many_stacks(void)
{
	const size_t nr = 200000;
	struct folded *f = folded__new();
	struct timespec t0, t1;
	char a[32], b[32];
	const char *frames[4] = { "on-cpu", "comm", a, b };
	__u64 sum;
	char *text;
	double secs;
	size_t i;
	int err = 0;

	if (!CHECK(f, "folded__new"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < nr && !err; i++) {
			snprintf(a, sizeof(a), "fn_%zu", i % 1000);
			snprintf(b, sizeof(b), "leaf_%zu", i);
			err = folded__add(f, frames, 4, 3);
		}
	}
	CHECK_EQ_S64(err, 0, "add 2 x %zu stacks", nr);
	CHECK_EQ_U64(folded__nr(f), nr, "distinct stacks counted");

	text = write_to_string(f, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK_EQ_S64(err, 0, "write");
	CHECK_EQ_S64(parse_all(text, &sum, __func__), (long)nr, "one parsable line per stack");
	CHECK_EQ_U64(sum, nr * 6, "total weight");
	/* Takes ~0.2 s; 10 s would only be reached by a quadratic table. */
	CHECK(secs < 10.0, "add + write of %zu stacks is fast (%.2f s)", nr, secs);
	free(text);
	folded__free(f);
}

static void test_parse_ok(void)
{
	static const struct {
		const char *line;
		size_t nr;
		__u64 weight;
	} ok[] = {
		{ "a 1", 1, 1 },
		{ "on-cpu;app;main;work 123", 4, 123 },
		{ "on-cpu;app;operator new(unsigned long);x_[k] 7", 4, 7 },
		{ "a;b 0", 2, 0 },
		{ "a;b 007", 2, 7 },
		{ "a;b 5\n", 2, 5 },
		{ "a 18446744073709551615", 1, UINT64_MAX },
		{ "caf\xc3\xa9;libc.so.6+0x1f3a 9", 2, 9 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		size_t nr = 0;
		__u64 w = 0;
		int err = folded__parse_line(ok[i].line, &nr, &w);

		CHECK(err == 0 && nr == ok[i].nr && w == ok[i].weight,
		      "accepts \"%s\" as %zu frames, weight %llu", ok[i].line, ok[i].nr,
		      (unsigned long long)ok[i].weight);
	}
	CHECK_EQ_S64(folded__parse_line("a;b 3", NULL, NULL), 0, "NULL outputs are ok");
}

static void test_parse_reject(void)
{
	static const struct {
		const char *line;
		const char *why;
	} bad[] = {
		{ "a;b", "no weight" },
		{ "a;b ", "space but no weight" },
		{ "a;b -1", "negative weight" },
		{ "a;b +1", "signed weight" },
		{ "a;b 1.5", "float weight" },
		{ "a;b 1e3", "exponent weight" },
		{ "a;b 0x10", "hex weight" },
		{ "a;b 12x", "trailing junk" },
		{ "a;b 1 ", "trailing space" },
		{ "a;b 1\n\n", "two newlines" },
		{ "a;b 1\r\n", "CRLF" },
		{ "a;;b 1", "empty frame" },
		{ ";a 1", "leading ';'" },
		{ "a; 1", "trailing ';'" },
		{ "; 1", "only ';'" },
		{ " 1", "no frames" },
		{ "a;b\t1", "tab separator" },
		{ "a\tb 1", "tab in a frame" },
		{ "a\nb 1", "newline in a frame" },
		{ "", "empty line" },
		{ "\n", "empty line with newline" },
		{ "a 18446744073709551616", "weight over u64 max" },
		{ "a 99999999999999999999999", "weight far over u64 max" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_EQ_S64(folded__parse_line(bad[i].line, NULL, NULL), -EINVAL, "rejects %s",
			     bad[i].why);
}

static int get_pieces(const char *line, __u64 weight, __u64 count, __u64 max,
		      const struct folded_piece *p, size_t n, void *ctx)
{
	struct folded_piece *out = ctx;

	(void)line, (void)weight, (void)count, (void)max;
	out[0].span = n; /* how many, in the first's span */
	for (size_t i = 0; i < n && i < 4; i++)
		out[i + 1] = p[i];
	return 0;
}

/*
 * folded__coarsen(): a line's pieces in slices twice as long, a piece over
 * several shared out by slice (its counts in its last part), merged with
 * those of the same coarse slice; the line's totals unchanged.
 */
static void test_coarsen(void)
{
	struct folded *f = folded__new();
	const char *frames[] = { "main", "wait" };
	struct folded_piece run = { .slice = 1, .span = 4, .weight = 400 };
	struct folded_piece last = { .slice = 5, .span = 1, .weight = 10, .count = 1, .max = 410 };
	struct folded_piece got[5] = {};
	__u64 sum = 0;
	int err;
	char *text;

	if (!CHECK(f != NULL, "folded__new"))
		return;
	CHECK(!folded__add_piece(f, frames, 2, &run), "slices 1-4");
	CHECK(!folded__add_piece(f, frames, 2, &last), "slice 5, counting it");
	CHECK(!folded__coarsen(f), "coarsen");
	folded__for_each_pieces(f, get_pieces, got);
	CHECK_EQ_U64(got[0].span, 3, "three pieces: coarse 0, 1 and 2");
	CHECK(got[1].slice == 0 && got[1].span == 1 && got[1].weight == 100 && !got[1].count,
	      "coarse 0: fine 1's share");
	CHECK(got[2].slice == 1 && got[2].span == 1 && got[2].weight == 200 && !got[2].count,
	      "coarse 1: fine 2-3's share");
	CHECK(got[3].slice == 2 && got[3].span == 1 && got[3].weight == 110 &&
		      got[3].count == 1 && got[3].max == 410,
	      "coarse 2: fine 4's share and fine 5, with its count and max");
	text = write_to_string(f, &err);
	CHECK(text && parse_all(text, &sum, __func__) == 1 && sum == 410,
	      "the line's weight stays 410 (got %llu)", (unsigned long long)sum);
	free(text);
	folded__free(f);
}

int main(void)
{
	test_coarsen();
	test_sanitize();
	test_merge();
	test_sanitized_frames();
	test_long_names();
	test_weights();
	test_sort_order();
	test_errors();
	test_many_stacks();
	test_parse_ok();
	test_parse_reject();
	return unit_done();
}
