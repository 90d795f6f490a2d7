/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_CLI_H
#define WPROF_CLI_H

#include <stdio.h>

#include "opts.h"

/*
 * Parse `wprof record` arguments (argv[0] is "record"). Returns 0, 1 when
 * help was printed (exit 0), or -EINVAL after printing one error line.
 */
int cli_parse_record(int argc, char **argv, struct record_opts *opts);
void cli_free_record(struct record_opts *opts);
void cli_usage(FILE *f);

#endif /* WPROF_CLI_H */
