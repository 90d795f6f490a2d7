// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of `wprof diff` (src/diff.c), run as the command is, on files:
 * shares compared per unit of each file's total, the table (empty for a
 * file against itself), difffolded.pl's form scaled to AFTER's total (or
 * not, --absolute), the differential flame graph with what vanished, the
 * --fail-if-grown gate and its exit codes, and one error line, exit 2, for
 * every file that cannot be compared.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "unit.h"

static char dir[] = "/tmp/wprof-test-diff.XXXXXX";

static const char *path(const char *name)
{
	static char buf[4][256];
	static int n;
	char *p = buf[n++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static void put(const char *name, const char *text, size_t len)
{
	FILE *f = fopen(path(name), "w");

	if (f) {
		fwrite(text, 1, len, f);
		fclose(f);
	}
}

/* The whole of a file (static buffer; "" when it cannot be read). */
static const char *slurp(const char *p)
{
	static char buf[65536];
	FILE *f = fopen(p, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* Run `wprof diff ARGS...`; its stderr in *@err (static), its exit code returned. */
static int run(const char **err, ...)
{
	static char err_text[8192];
	char *argv[16] = { "diff" };
	int argc = 1, saved, fd, rc;
	va_list ap;

	va_start(ap, err);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stderr);
	saved = dup(2);
	fd = open(path("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	close(fd);
	rc = cmd_diff(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	/* slurp()'s buffer is the next slurp()'s */
	snprintf(err_text, sizeof(err_text), "%s", slurp(path("stderr")));
	*err = err_text;
	return rc;
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#define BEFORE "on-cpu;a;x 60\noff-cpu:sleep;a;y 40\non-cpu;a;gone 10\n"
#define AFTER "on-cpu;a;x 60\noff-cpu:sleep;a;y 100\noff-cpu:sleep;a;y 20\noff-cpu:sleep;a;z 20\n"

static void test_self(void)
{
	const char *err;

	put("before", BEFORE, strlen(BEFORE));
	CHECK_EQ_S64(run(&err, "-o", path("self.txt"), path("before"), path("before"), NULL), 0,
		     "a file against itself: exit 0");
	CHECK_STREQ(slurp(path("self.txt")), "", "a file against itself: an empty table");
	CHECK(strstr(err, "0 stacks changed share"), "and stderr says no stack changed (%s)", err);
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "0", "-o", path("junk"), path("before"),
			 path("before"), NULL), 0,
		     "--fail-if-grown 0 passes for a file against itself");
}

static void test_table(void)
{
	const char *err, *t;

	put("after", AFTER, strlen(AFTER));
	CHECK_EQ_S64(run(&err, "-o", path("t.txt"), path("before"), path("after"), NULL), 0,
		     "table: exit 0");
	t = slurp(path("t.txt"));
	CHECK_EQ_U64(lines(t), 5, "a header and the 4 stacks that changed");
	CHECK(strstr(t, "STATE  CHANGE_PTS   BEFORE%    AFTER%  STACK\n"
			"shrank     -24.55     54.55     30.00  on-cpu;x\n"
			"grew       +23.64     36.36     60.00  off-cpu:sleep;y\n"
			"new        +10.00      0.00     10.00  off-cpu:sleep;z\n"
			"gone        -9.09      9.09      0.00  on-cpu;gone\n"),
	      "shares of each total, most changed first, lines of one stack added up, the "
	      "thread's name left out (--group none) (%s)", t);
	CHECK_EQ_S64(run(&err, "--group", "thread", "-o", path("tg.txt"), path("before"),
			 path("after"), NULL), 0, "--group thread");
	t = slurp(path("tg.txt"));
	CHECK(strstr(t, "grew       +23.64     36.36     60.00  off-cpu:sleep;a;y\n"),
	      "--group thread: the thread's name kept (%s)", t);
	CHECK_EQ_S64(run(&err, "--top", "1", "-o", path("t1.txt"), path("before"), path("after"),
			 NULL), 0, "--top 1");
	CHECK_EQ_U64(lines(slurp(path("t1.txt"))), 2, "--top 1: a header and one row");
	CHECK_EQ_S64(run(&err, "--absolute", "-o", path("ta.txt"), path("before"), path("after"),
			 NULL), 0, "--absolute");
	t = slurp(path("ta.txt"));
	CHECK(strstr(t, "CHANGE_MS") && strstr(t, "grew       +0.080     0.040     0.120  "
						 "off-cpu:sleep;y\n"),
	      "--absolute: the change in ms, y first (%s)", t);
}

static void test_folded(void)
{
	const char *err;

	CHECK_EQ_S64(run(&err, "-f", "folded", "-o", path("f.txt"), path("before"), path("after"),
			 NULL), 0, "-f folded");
	CHECK_STREQ(slurp(path("f.txt")),
		    "off-cpu:sleep;y 73 120\noff-cpu:sleep;z 0 20\non-cpu;gone 18 0\n"
		    "on-cpu;x 109 60\n",
		    "stack BEFORE AFTER, BEFORE scaled to AFTER's total (200/110), by stack");
	CHECK_EQ_S64(run(&err, "-f", "folded", "--absolute", "-o", path("fa.txt"), path("before"),
			 path("after"), NULL), 0, "-f folded --absolute");
	CHECK(strstr(slurp(path("fa.txt")), "off-cpu:sleep;y 40 120\n"),
	      "--absolute: BEFORE as it is");
}

static void test_svg(void)
{
	const char *err, *svg;

	CHECK_EQ_S64(run(&err, "-o", path("d.svg"), path("before"), path("after"), NULL), 0,
		     "-o d.svg: a flame graph");
	svg = slurp(path("d.svg"));
	CHECK(!strncmp(svg, "<?xml", 5) && strstr(svg, "data-diff=\"1\""),
	      "the .svg name chose the svg format");
	CHECK(strstr(svg, "data-total-us=\"200\""), "widths from AFTER (200 us)");
	CHECK(strstr(svg, "data-n=\"gone\" data-x=\"") && strstr(svg, "data-w=\"18\"") &&
	      strstr(svg, "[only in BEFORE]") && strstr(svg, "url(#gone)"),
	      "a stack only BEFORE had is drawn, with its (scaled) BEFORE width, striped");
	CHECK(strstr(svg, "<title>y (36.36% \xe2\x86\x92 60.00%, +23.64 points; 120 \xc2\xb5s in "
			  "AFTER)</title>"), "y's tooltip: its share before and after");
	CHECK(strstr(svg, "wprof diff: ") && strstr(svg, "/before \xe2\x86\x92 "),
	      "the title names the files");
}

static void test_gate(void)
{
	const char *err;

	CHECK_EQ_S64(run(&err, "--fail-if-grown", "30", "-o", path("junk"), path("before"),
			 path("after"), NULL), 1,
		     "--fail-if-grown 30: all of the sleep grew 33.64 points: exit 1");
	CHECK(strstr(err, "wprof: grew: off-CPU sleep in (all of it): 36.36% -> 70.00% (+33.64 "
			  "points of share, more than 30)\n"
			  "wprof:   most in y: 36.36% -> 60.00% (+23.6 points)\n"
			  "wprof:   and in z: 0.00% -> 10.00% (+10.0 points)\n") &&
	      !strstr(err, "grew: off-CPU sleep in y"),
	      "it names the sleep, spread over y and z, and where it grew most; y alone did not "
	      "grow that much (%s)", err);
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "15", "-o", path("junk"), path("before"),
			 path("after"), NULL), 1, "--fail-if-grown 15: exit 1");
	CHECK(strstr(err, "wprof: grew: off-CPU sleep in y: 36.36% -> 60.00% (+23.64 points of "
			  "share, more than 15)\n") && !strstr(err, "in z") &&
	      !strstr(err, "(all of it)"),
	      "it names y, the deepest path that grew so, and not z (+10) (%s)", err);
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "5", "-f", "folded", "-o", path("g.txt"),
			 path("before"), path("after"), NULL), 1, "--fail-if-grown 5: exit 1");
	CHECK(strstr(err, "in y:") && strstr(err, "grew: off-CPU sleep in z: 0.00% -> 10.00%"),
	      "it names y and the new z (%s)", err);
	CHECK(strlen(slurp(path("g.txt"))) > 0, "the output is written all the same");
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "35", "-o", path("junk"), path("before"),
			 path("after"), NULL), 0,
		     "--fail-if-grown 35: nothing grew that much: exit 0");
	CHECK(strstr(err, "gate passed: the most grown code path grew +33.64 points of "
			  "BEFORE's whole (share; at most 35 allowed): off-cpu:sleep\n"),
	      "a pass says how near it came, and where (%s)", err);
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "5", "--states", "on-cpu", "-o", path("junk"),
			 path("before"), path("after"), NULL), 0,
		     "--states on-cpu: the sleep is not judged, on-CPU only shrank: exit 0");
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "25", "--absolute", "-o", path("junk"),
			 path("after"), path("before"), NULL), 0,
		     "--absolute: AFTER has less time, nothing grew: exit 0");
	CHECK_EQ_S64(run(&err, "--fail-if-grown", "40", "--absolute", "-o", path("junk"),
			 path("before"), path("after"), NULL), 1,
		     "--absolute: sleep 40 -> 140 us, +91%% of BEFORE's 110 us: exit 1");
	CHECK(strstr(err, "grew: off-CPU sleep in y: 0.000 s -> 0.000 s (+72.7% of BEFORE's "
			  "whole, more than 40%)"), "in %% of BEFORE's whole (%s)", err);
}

/*
 * Functions judged in all their callers: a callee whose time grew a
 * little under each of many callers (no path grew much) is named.
 */
static void test_gate_functions(void)
{
	static const char before[] = "on-cpu;main;a;slow 10\non-cpu;main;b;slow 10\n"
				     "on-cpu;main;c;slow 10\non-cpu;main;d;slow 10\n"
				     "on-cpu;main;rest 960\n";
	static const char after[] = "on-cpu;main;a;slow 40\non-cpu;main;b;slow 40\n"
				    "on-cpu;main;c;slow 40\non-cpu;main;d;slow 40\n"
				    "on-cpu;main;rest 960\n";
	const char *err;

	put("fb", before, strlen(before));
	put("fa", after, strlen(after));
	CHECK_EQ_S64(run(&err, "--group", "thread", "--absolute", "--fail-if-grown", "5", "-o",
			 path("junk"), path("fb"), path("fa"), NULL), 1,
		     "4 callers of slow each +3%% of the whole, slow +12%%: exit 1");
	CHECK(strstr(err, "grew: on-CPU under slow, in all its callers: 0.000 s -> 0.000 s "
			  "(+12.0% of BEFORE's whole, more than 5%)") &&
	      !strstr(err, "grew: on-CPU in main;a"),
	      "slow named in all its callers, no single path of it (%s)", err);
}

/* Which saved recordings ran a command to its end: a fixed amount of work. */
static void test_is_cmd(void)
{
	CHECK(diff__is_cmd("./smoke -n 3", "./smoke", "wprof record -o x.wprof -- ./smoke -n 3"),
	      "-- CMD: a command's whole run");
	CHECK(diff__is_cmd("make -j2", "make", "wprof record -o x.wprof make -j2"),
	      "CMD without --: the same");
	CHECK(!diff__is_cmd("./server", "./server", "wprof record -d 30 -o x.wprof -- ./server"),
	      "-d: a window, however the command ran");
	CHECK(!diff__is_cmd("./server", "./server", "wprof record --duration=5 -- ./server"),
	      "--duration=5: a window");
	CHECK(diff__is_cmd("./t -d 5", "./t", "wprof record -o x.wprof -- ./t -d 5"),
	      "the command's own -d is the command's");
	CHECK(!diff__is_cmd("pid 42 (redis)", "redis", "wprof record -p 42 -o x.wprof"),
	      "-p: a window");
	CHECK(!diff__is_cmd("every thread", "", "wprof record -a -d 5 -o x.wprof"), "-a: a window");
}

/* The whole of a large file (malloc'd; "" when it cannot be read). */
static char *slurp_big(const char *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(p, "r"), *out = open_memstream(&buf, &len);
	char chunk[65536];
	size_t n;

	while (f && out && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, out);
	if (f)
		fclose(f);
	if (out)
		fclose(out);
	return buf ? buf : strdup("");
}

/* The largest data-d="N" of a flame graph: its deepest frame. */
static unsigned long deepest(const char *svg)
{
	unsigned long max = 0;

	for (const char *p = svg; (p = strstr(p, "data-d=\"")); p++) {
		unsigned long d = strtoul(p + 8, NULL, 10);

		max = d > max ? d : max;
	}
	return max;
}

/*
 * A stack of 40000 frames (a flame graph drawn by recursion overflowed the
 * stack at some 35000): cut when read to 2048, the marker in place of the
 * frames cut, counted on stderr; every format written.
 */
static void test_deep(void)
{
	static const char mark[] = "[cut: too long to read]";
	size_t n = 40000, cap = 16 * n + 64, len = 0;
	char *text = malloc(cap), *out, want[160];
	const char *err;

	len += snprintf(text + len, cap - len, "on-cpu;deep");
	for (size_t i = 0; i < n; i++)
		len += snprintf(text + len, cap - len, ";f%zu", i);
	len += snprintf(text + len, cap - len, " 100\non-cpu;deep;f0 50\n");
	put("deep", text, len);
	free(text);
	snprintf(want, sizeof(want), "wprof: lost: 1 stacks of %s cut to 2048 frames and 1 MiB "
		 "when read, the frame %s in place of the rest [stacks_cut_on_read]\n",
		 path("deep"), mark);

	CHECK_EQ_S64(run(&err, "--group", "thread", "-o", path("deep.svg"), path("before"),
			 path("deep"), NULL), 0,
		     "-o deep.svg: exit 0");
	CHECK(strstr(err, want), "the cut counted on stderr (%s)", err);
	out = slurp_big(path("deep.svg"));
	CHECK(strstr(out, "data-n=\"[cut: too long to read]\"") && strstr(out, "data-n=\"f39999\""),
	      "the marker and the leaf drawn");
	CHECK_EQ_U64(deepest(out), 2048, "2048 frames deep, under the root");
	CHECK(strstr(out, "</svg>\n"), "the graph written to its end");
	free(out);

	CHECK_EQ_S64(run(&err, "--group", "thread", "-f", "folded", "-o", path("deep.txt"),
			 path("before"), path("deep"), NULL), 0, "-f folded: exit 0");
	CHECK(strstr(err, want), "the cut counted on stderr");
	out = slurp_big(path("deep.txt"));
	snprintf(want, sizeof(want), ";f2043;%s;f39999 0 100\n", mark);
	CHECK(strstr(out, "on-cpu;deep;f0;f1;") && strstr(out, want),
	      "its frames from the root, the marker, the leaf");
	free(out);
	CHECK_EQ_S64(run(&err, "-o", path("deeptab.txt"), path("deep"), path("before"), NULL), 0,
		     "table: exit 0");
	CHECK(strstr(err, "lost: 1 stacks of ") && strstr(err, "/deep cut"),
	      "the cut counted, BEFORE's");
}

/* One error line starting with "wprof: " and matching @want, exit 2. */
static void expect_error(const char *what, const char *want, const char *a, const char *b,
			 const char *c)
{
	const char *err;
	int rc = run(&err, a, b, c, NULL);

	CHECK(rc == 2 && lines(err) == 1 && !strncmp(err, "wprof: ", 7) && strstr(err, want),
	      "%s: exit 2 (got %d), one line with '%s' (got '%s')", what, rc, want, err);
}

static void test_errors(void)
{
	static const char gz[] = "\x1f\x8b\x08\x00 stuff\n";

	put("bad", "on-cpu;a 1\nno weight here\n", 26);
	put("gz", gz, sizeof(gz) - 1);
	put("json", "{\"stacks\": []}\n", 15);
	put("empty", "", 0);
	put("zero", "a;b 0\n", 6);
	put("nul", "a;b\0c 1\n", 8);
	expect_error("a missing file", "cannot open", path("nope"), path("before"), NULL);
	expect_error("a line that is not folded", "bad:2: not a folded line", path("before"),
		     path("bad"), NULL);
	expect_error("gzip", "gz:1: not a folded line ('frame;frame;... WEIGHT') (gzip data: a "
		     "pprof file?", path("gz"), path("after"), NULL);
	expect_error("JSON", "(JSON?", path("json"), path("after"), NULL);
	expect_error("an empty file", "has no stacks", path("empty"), path("after"), NULL);
	expect_error("a file that weighs nothing", "weighs 0", path("before"), path("zero"), NULL);
	expect_error("a NUL byte", "nul:1: not a folded line", path("nul"), path("after"), NULL);
	expect_error("one file", "two files needed", path("before"), NULL, NULL);
	expect_error("three files", "more than two files", path("before"), path("after"),
		     path("after"));
	expect_error("--fail-if-grown abc", "invalid --fail-if-grown 'abc'", "--fail-if-grown",
		     "abc", path("before"));
	expect_error("-f png", "invalid format 'png'", "-f", "png", path("before"));
	{
		const char *err;
		int rc = run(&err, "-o", "x.png", path("before"), path("after"), NULL);

		CHECK(rc == 2 && lines(err) == 1 && strstr(err, "-o x.png: '.png' names no format"),
		      "-o x.png: exit 2, one line (got %d, %s)", rc, err);
	}
	expect_error("--group x", "invalid --group 'x': expected thread, pool, process or none",
		     "--group", "x", path("before"));
	expect_error("--states x", "invalid --states 'x'", "--states", "x", path("before"));
	{
		const char *err;
		int rc = run(&err, "--measure", "rate", path("before"), path("after"), NULL);

		CHECK(rc == 2 && strstr(err, "wprof: --measure rate needs two saved recordings"),
		      "--measure rate of folded text: exit 2 (got %d, %s)", rc, err);
		rc = run(&err, "--group", "process", path("before"), path("after"), NULL);
		CHECK(rc == 2 && lines(err) == 1 &&
		      strstr(err, "--group process needs saved recordings"),
		      "--group process of folded text: exit 2, one line (got %d, %s)", rc, err);
	}
	expect_error("--top -1", "invalid --top", "--top", "-1", path("before"));
	expect_error("stdin twice", "both be stdin", "-", "-", NULL);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("FAIL main: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_self();
	test_table();
	test_folded();
	test_svg();
	test_gate();
	test_gate_functions();
	test_is_cmd();
	test_deep();
	test_errors();
	if (!unit_nr_fail) {
		static const char *const names[] = {
			"before", "after", "stderr", "self.txt", "t.txt", "t1.txt", "ta.txt", "f.txt",
			"fa.txt", "d.svg", "g.txt", "tg.txt", "fb", "fa", "junk", "bad", "gz", "json", "empty", "zero", "nul",
			"deep", "deep.svg", "deep.txt", "deeptab.txt",
		};

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(path(names[i]));
		rmdir(dir);
	}
	return unit_done();
}
