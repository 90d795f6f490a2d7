// SPDX-License-Identifier: GPL-2.0-only
/*
 * The -p/-t id lists: what `pidof`, `pgrep` and `pgrep -d,` print is
 * accepted as it is; an empty element anywhere is refused with its reason;
 * and cli_parse_record() turns a refused list into -EINVAL (exit 2). The
 * outputs: -o more than once, each in the format its name ends in.
 */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"
#include "unit.h"
#include "util.h"

/* "1 2 3": the ids parse_id_list() appends for @s, or NULL with @why set. */
static const char *ids_of(const char *s, int *err, char *why, size_t why_len)
{
	static char out[256];
	__u32 *ids = NULL;
	size_t nr = 0, len = 0;

	why[0] = '\0';
	*err = parse_id_list(s, &ids, &nr, why, why_len);
	out[0] = '\0';
	for (size_t i = 0; i < nr && len < sizeof(out); i++)
		len += snprintf(out + len, sizeof(out) - len, "%s%u", i ? " " : "", ids[i]);
	free(ids);
	return *err ? NULL : out;
}

static void test_id_list_ok(void)
{
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "42", "42", "one id" },
		{ "1,2,3", "1 2 3", "commas (pgrep -d,)" },
		{ "29602 29601 29600", "29602 29601 29600", "spaces (pidof)" },
		{ "7\n8\n9", "7 8 9", "newlines (pgrep)" },
		{ "1, 2 ,3", "1 2 3", "a comma with blanks around it" },
		{ "1 2,3", "1 2 3", "blanks and commas mixed" },
		{ "1\t 2", "1 2", "a run of blanks is one separator" },
		{ "  5 6  ", "5 6", "blanks at either end" },
		{ "4 4", "4 4", "a repeated id" },
		{ "1073741823", "1073741823", "the largest id" },
	};
	char why[128];
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = ids_of(cases[i].in, &err, why, sizeof(why));

		CHECK_STREQ(got ? got : why, cases[i].want, "%s: '%s'", cases[i].what, cases[i].in);
	}
}

static void test_id_list_reject(void)
{
	static const struct {
		const char *in, *why;
	} cases[] = {
		{ "", "it is empty" },
		{ "   ", "it is empty" },
		{ "1,", "it ends with a comma" },
		{ "1 , ", "it ends with a comma" },
		{ ",1", "it starts with a comma" },
		{ " ,1", "it starts with a comma" },
		{ "1,,2", "it has an empty element between two commas" },
		{ "1, ,2", "it has an empty element between two commas" },
		{ "1 abc", "'abc' is not a positive number" },
		{ "0", "'0' is not a positive number" },
		{ "-3", "'-3' is not a positive number" },
		{ "1;2", "'1;2' is not a positive number" },
		{ "1073741824", "'1073741824' is too large for an id" },
		{ "123456789012345678901234567", "'12345678901234567890...' is not a number" },
	};
	char why[128];
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = ids_of(cases[i].in, &err, why, sizeof(why));

		CHECK(!got && err == -EINVAL, "'%s' is refused with -EINVAL", cases[i].in);
		CHECK_STREQ(why, cases[i].why, "reason for '%s'", cases[i].in);
	}
}

/* cli_parse_record() on "record -p LIST -d 1" (its error line goes to stderr). */
static int parse_p(const char *opt, const char *list, struct record_opts *o)
{
	char *argv[] = { "record", (char *)opt, (char *)list, "-d", "1", NULL };

	return cli_parse_record(ARRAY_SIZE(argv) - 1, argv, o);
}

static void test_cli_lists(void)
{
	struct record_opts o;

	CHECK_EQ_S64(parse_p("-p", "10 11,12", &o), 0, "-p '10 11,12' is accepted");
	CHECK(o.filter == WPROF_FILTER_PID && o.nr_ids == 3 && o.ids[0] == 10 && o.ids[2] == 12,
	      "-p '10 11,12': 3 pids, 10 first, 12 last");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_p("-t", "20 21", &o), 0, "-t '20 21' is accepted");
	CHECK(o.filter == WPROF_FILTER_TID && o.nr_ids == 2, "-t '20 21': 2 tids");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_p("-p", "10,", &o), -EINVAL, "-p '10,' is refused");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_p("--tid", "", &o), -EINVAL, "--tid '' is refused");
	cli_free_record(&o);
}

/* cli_parse_record() of `record ARGS... -a`; 0 or -EINVAL. */
static int parse_args(struct record_opts *o, char **args)
{
	char *argv[24] = { "record" };
	int argc = 1;

	for (; *args && argc < 22; args++)
		argv[argc++] = *args;
	argv[argc++] = "-a";
	argv[argc] = NULL;
	return cli_parse_record(argc, argv, o);
}

/* -o more than once: each file's format from its name, others -f's; stdout when none. */
static void test_cli_outputs(void)
{
	struct record_opts o;

	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-f", "json", NULL }), 0, "-f json");
	CHECK(o.nr_outputs == 1 && !o.outputs[0].path && o.outputs[0].format == FORMAT_JSON,
	      "-f json alone: one output, stdout, json");
	CHECK(opts__line_ids(&o), "json lines carry pid and tid");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ NULL }), 0, "no -f, no -o");
	CHECK(o.nr_outputs == 1 && o.outputs[0].format == FORMAT_FOLDED && !opts__line_ids(&o),
	      "folded to stdout, lines without ids");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-o", "x.svg", "-o", "x.pb.gz", "-o", "x.txt",
						"-o", "x.folded", "-f", "threads", NULL }),
		     0, "four -o files");
	CHECK(o.nr_outputs == 4 && o.outputs[0].format == FORMAT_SVG &&
	      o.outputs[1].format == FORMAT_PPROF && o.outputs[2].format == FORMAT_THREADS &&
	      o.outputs[3].format == FORMAT_FOLDED,
	      "x.svg svg, x.pb.gz pprof, x.txt -f's threads, x.folded folded");
	CHECK_STREQ(o.output, "x.svg", "the first -o is opts.output");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-f", "pprof", "-o", "p", NULL }), 0, "-f pprof -o p");
	CHECK(o.outputs[0].format == FORMAT_PPROF, "a name without a known ending takes -f's format");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-o", "x.png", NULL }), -EINVAL,
		     "-o x.png without -f is refused, not written as folded text");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-o", "x.png", "-f", "svg", NULL }), 0,
		     "-o x.png -f svg: -f says what it is");
	CHECK(o.outputs[0].format == FORMAT_SVG, "x.png as -f svg");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-o", "dir.d/out", "-o", "x.txt", "-o", ".x",
						NULL }), 0,
		     "no ending, .txt, a dot file: -f's format (folded)");
	CHECK(o.outputs[0].format == FORMAT_FOLDED && o.outputs[1].format == FORMAT_FOLDED &&
	      o.outputs[2].format == FORMAT_FOLDED, "all folded");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-o", "a.svg", "-o", "a.svg", NULL }), -EINVAL,
		     "the same -o twice is refused");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-f", "png", NULL }), -EINVAL,
		     "-f png is refused");
	cli_free_record(&o);
	CHECK_EQ_S64(parse_args(&o, (char *[]){ "-o", "1", "-o", "2", "-o", "3", "-o", "4", "-o",
						"5", "-o", "6", "-o", "7", NULL }),
		     0, "7 -o files");
	CHECK_EQ_U64(o.nr_outputs, 7, "7 outputs");
	cli_free_record(&o);
}

int main(void)
{
	test_id_list_ok();
	test_id_list_reject();
	test_cli_lists();
	test_cli_outputs();
	return unit_done();
}
