// SPDX-License-Identifier: GPL-2.0-only
/*
 * The -p/-t id lists: what `pidof`, `pgrep` and `pgrep -d,` print is
 * accepted as it is; an empty element anywhere is refused with its reason;
 * and cli_parse_record() turns a refused list into -EINVAL (exit 2).
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

int main(void)
{
	test_id_list_ok();
	test_id_list_reject();
	test_cli_lists();
	return unit_done();
}
