/* SPDX-License-Identifier: GPL-2.0-only */
/* `wprof record`'s command line and environment knobs (cli.c). */
#ifndef WPROF_CLI_H
#define WPROF_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "opts.h"

/*
 * Parse `wprof record` arguments (argv[0] is "record"). Returns 0, 1 when
 * help was printed (exit 0), or -EINVAL after printing one error line.
 */
int cli_parse_record(int argc, char **argv, struct record_opts *opts);
void cli_free_record(struct record_opts *opts);
void cli_usage(FILE *f);

/* wprof record's options, ending with a zeroed entry. */
const struct option *cli_record_options(void);

/* Shared with `wprof report`; each prints one error line and returns -EINVAL. */
/* -f NAME */
int cli_format_of_name(const char *name, enum output_format *f);
/*
 * The -o files @outs[0..*@nr) each in the format its name ends in, else
 * @format; none: stdout in @format (*@nr becomes 1). A name ending in
 * what names no format (x.png) is refused unless -f was given
 * (@format_given).
 */
int cli_set_outputs(enum output_format format, bool format_given, struct output_spec *outs,
		    size_t *nr);
/* -p/-t LIST (@opt 'p' or 't'), appended to *@ids; -ENOMEM too. */
int cli_id_list(int opt, const char *arg, __u32 **ids, size_t *nr);

#endif /* WPROF_CLI_H */
