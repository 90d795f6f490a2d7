// SPDX-License-Identifier: GPL-2.0-only
/* wprof: where wall-clock time goes, on the CPU and off it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_report.h"
#include "diff.h"
#include "record.h"
#include "util.h"

#ifndef WPROF_VERSION
#define WPROF_VERSION "0.1"
#endif

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
};

static const struct cmd cmds[] = {
	{ "record", cmd_record },
	{ "report", cmd_report },
	{ "diff", cmd_diff },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		cli_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("wprof %s\n", WPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].func(argc - 1, argv + 1);
	pr_err("unknown command '%s'; see 'wprof --help'", argv[1]);
	return 2;
}
