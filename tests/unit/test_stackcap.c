// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the limits on a stack read from a file (src/stackcap.c) and
 * of the folded text reader that keeps to them (src/foldread.c): a stack
 * within them comes back as it is; a deeper or longer one keeps its frames
 * from the root, the marker and its leaf; a line of any length is read in
 * a few MiB, the lines after it as they are; what is not folded text is
 * refused without reading it to its end (/dev/zero).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "foldread.h"
#include "stackcap.h"
#include "unit.h"

/* "f0;f1;...;f(n-1)" (malloc'd). */
static char *chain(size_t n, size_t *len)
{
	char *s = malloc(n * 12 + 1), *p = s;

	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%sf%zu", i ? ";" : "", i);
	*len = p - s;
	return s;
}

static size_t frames_of(const char *s)
{
	size_t n = 1;

	for (; *s; s++)
		n += *s == ';';
	return n;
}

static void test_cut(void)
{
	static char out[STACKCAP_BYTES + 1];
	size_t len, n;
	char *s = chain(STACKCAP_FRAMES, &len), want[64];

	CHECK(!stackcap__cut(&stackcap_default, s, len, out, &n), "%d frames: kept as they are",
	      STACKCAP_FRAMES);
	free(s);
	s = chain(40000, &len);
	CHECK(stackcap__cut(&stackcap_default, s, len, out, &n), "40000 frames: cut");
	CHECK_EQ_U64(frames_of(out), STACKCAP_FRAMES, "to %d frames", STACKCAP_FRAMES);
	CHECK_EQ_U64(strlen(out), n, "its length");
	snprintf(want, sizeof(want), ";f%d;" STACKCAP_MARK ";f39999", STACKCAP_FRAMES - 3);
	CHECK(!strncmp(out, "f0;f1;f2;", 9) && strstr(out, want) &&
	      !strcmp(out + n - strlen(want), want),
	      "the first %d frames from the root, the marker, the leaf", STACKCAP_FRAMES - 2);
	free(s);

	/* 1500 frames of 1000 bytes: deep enough, 1.5 MiB long */
	s = malloc(1500 * 1001);
	memset(s, 'x', 1500 * 1001);
	for (size_t i = 1; i < 1500; i++)
		s[i * 1001 - 1] = ';';
	len = 1500 * 1001 - 1;
	s[len - 1] = 'L';
	CHECK(stackcap__cut(&stackcap_default, s, len, out, &n), "1.5 MiB in 1500 frames: cut");
	CHECK(n <= STACKCAP_BYTES && n > STACKCAP_BYTES - 2 * 1001, "to at most 1 MiB (%zu)", n);
	CHECK(out[n - 1] == 'L' && strstr(out, STACKCAP_MARK ";x") && frames_of(out) < 1500,
	      "the marker, then the leaf");
	free(s);

	/* one frame of 2 MiB: nothing of it fits */
	len = 2 << 20;
	s = malloc(len);
	memset(s, 'y', len);
	CHECK(stackcap__cut(&stackcap_default, s, len, out, &n) && !strcmp(out, STACKCAP_MARK),
	      "a frame of 2 MiB: the marker alone");
	/* a leaf longer than STACKCAP_LEAF is not kept */
	memcpy(s, "a;b;", 4);
	CHECK(stackcap__cut(&stackcap_default, s, len, out, &n) &&
	      !strcmp(out, "a;b;" STACKCAP_MARK), "a leaf of 2 MiB: the root frames, the marker");
	free(s);
}

/* What a reader of @text gives: each line as "STACK WEIGHT[ cut]\n", then "end" or "error N". */
static char *read_all(const char *text, size_t size, const struct stackcap *lim)
{
	struct foldread fr;
	char *res = NULL, *stack;
	size_t rlen = 0, len;
	FILE *f = fmemopen((void *)text, size, "r"), *out = open_memstream(&res, &rlen);
	__u64 w;
	bool cut;
	int ret;

	if (!f || !out || foldread__init(&fr, f, lim, NULL, 0))
		return NULL;
	while ((ret = foldread__next(&fr, &stack, &len, &w, &cut)) > 0)
		fprintf(out, "%s %llu%s\n", stack, (unsigned long long)w, cut ? " cut" : "");
	if (ret)
		fprintf(out, "error %d at line %zu\n", ret, fr.lineno);
	else
		fprintf(out, "end\n");
	foldread__free(&fr);
	fclose(f);
	fclose(out);
	return res;
}

static void test_read(void)
{
	static const struct stackcap small = { .frames = 4, .bytes = 40, .leaf = 6 };
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "a;b 1\n\nc 2", "a;b 1\nc 2\nend\n", "blank lines skipped, the last without \\n" },
		{ "a;b;c;d 1\n", "a;b;c;d 1\nend\n", "4 frames: as they are" },
		{ "a;b;c;d;e 7\n", "a;b;" STACKCAP_MARK ";e 7 cut\nend\n", "5 frames: cut" },
		{ "r;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;leaf 9\nx 1\n",
		  "r;" STACKCAP_MARK ";leaf 9 cut\nx 1\nend\n", "a long line: the lines after it too" },
		{ "r;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;longleaf 9\n",
		  "r;" STACKCAP_MARK " 9 cut\nend\n", "a leaf longer than the limit is left out" },
		{ "a;b 1\nno weight\n", "a;b 1\nerror -22 at line 2\n", "a line without weight" },
		{ "r;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;;leaf 9\n",
		  "error -22 at line 1\n", "an empty frame where the line is read past" },
		{ "r;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\tb;leaf 9\n",
		  "error -22 at line 1\n", "a tab where the line is read past" },
		{ "r;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;leaf; 9\n",
		  "error -22 at line 1\n", "an empty last frame" },
		{ "r;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;leaf 99999999999999999999\n",
		  "error -22 at line 1\n", "a weight over 64 bits" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = read_all(cases[i].in, strlen(cases[i].in), &small);

		CHECK_STREQ(got ? got : "", cases[i].want, "%s", cases[i].what);
		free(got);
	}
}

/* 20 million frames on one line, then a short one: read in a few MiB, both. */
static void test_read_huge(void)
{
	size_t n = 20 * 1000 * 1000, size = 2 + 2 * n + 10 + 6;
	char *text = malloc(size + 1), *got;
	struct rusage before, after;

	memcpy(text, "r;", 2);
	for (size_t i = 0; i < n; i++)
		memcpy(text + 2 + 2 * i, "f;", 2);
	memcpy(text + 2 + 2 * n, "leaf 12\nx 3\n", 13);
	size = strlen(text);
	getrusage(RUSAGE_SELF, &before);
	got = read_all(text, size, NULL);
	getrusage(RUSAGE_SELF, &after);
	CHECK(got && !strncmp(got, "r;f;f;", 6) &&
	      strstr(got, ";f;" STACKCAP_MARK ";leaf 12 cut\nx 3\nend\n"),
	      "a 40 MB line: cut to its root frames, the marker, its leaf; the next line read");
	CHECK(got && frames_of(got) == STACKCAP_FRAMES, "%d frames kept", STACKCAP_FRAMES);
	/* the text itself is 40 MB, already counted in before */
	CHECK(after.ru_maxrss - before.ru_maxrss < 16 * 1024, "in at most 16 MiB more (%ld KiB)",
	      after.ru_maxrss - before.ru_maxrss);
	free(got);
	free(text);
}

/* /dev/zero: a line without end, of NUL bytes: refused once it is known not to be folded. */
static void test_endless(void)
{
	struct foldread fr;
	FILE *f = fopen("/dev/zero", "r");
	char *stack;
	size_t len;
	__u64 w;
	bool cut;

	if (!CHECK(f && !foldread__init(&fr, f, NULL, NULL, 0), "/dev/zero opened"))
		return;
	CHECK_EQ_S64(foldread__next(&fr, &stack, &len, &w, &cut), -EINVAL,
		     "/dev/zero: not folded text, said without reading it to its end");
	foldread__free(&fr);
	fclose(f);
}

static void test_prefix(void)
{
	struct foldread fr;
	FILE *f = fmemopen((void *)";b 4\n", 5, "r");
	char *stack = "";
	size_t len;
	__u64 w = 0;
	bool cut;
	int ret;

	if (!CHECK(f && !foldread__init(&fr, f, NULL, "a", 1), "a reader after 1 byte read"))
		return;
	ret = foldread__next(&fr, &stack, &len, &w, &cut);
	CHECK(ret == 1 && !strcmp(stack, "a;b") && w == 4,
	      "the bytes read first are the line's first (%d: %s %llu)", ret, stack,
	      (unsigned long long)w);
	foldread__free(&fr);
	fclose(f);
}

int main(void)
{
	test_cut();
	test_read();
	test_read_huge();
	test_endless();
	test_prefix();
	return unit_done();
}
