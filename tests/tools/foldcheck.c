// SPDX-License-Identifier: GPL-2.0-only
/*
 * foldcheck: validate folded files with the same strict parser wprof's
 * writer is tested against (folded__parse_line()), so the integration tests
 * check every line of real output, not a sample.
 *
 *	foldcheck [-e] FILE...
 *
 * Fails (exit 1) on any line that does not parse, on a stack that appears
 * twice or out of bytewise order (the writer merges and sorts), and on an
 * empty file unless -e. Reports at most 10 bad lines per file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "folded.h"

#define MAX_REPORTS 10

static void put_escaped(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c == 0x7f)
			fprintf(stderr, "\\x%02x", c);
		else
			fputc(c, stderr);
	}
	if (s[i])
		fputs("...", stderr);
}

static int check_file(const char *path, int allow_empty)
{
	char *line = NULL, *prev = NULL;
	size_t cap = 0, lineno = 0, nr_bad = 0;
	ssize_t len;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "foldcheck: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *why = NULL;
		char *sp;

		lineno++;
		if (len == 0 || line[len - 1] != '\n')
			why = "no final newline";
		else if (folded__parse_line(line, NULL, NULL))
			why = "not a valid folded line";
		if (!why) {
			line[len - 1] = '\0';
			sp = strrchr(line, ' ');
			*sp = '\0';
			if (prev && strcmp(prev, line) >= 0)
				why = strcmp(prev, line) ? "stack out of order" : "duplicate stack";
			free(prev);
			prev = strdup(line);
			*sp = ' ';
		}
		if (why && nr_bad++ < MAX_REPORTS) {
			if (len && line[len - 1] == '\n')
				line[len - 1] = '\0';
			fprintf(stderr, "foldcheck: %s:%zu: %s: ", path, lineno, why);
			put_escaped(line, 300);
			fputc('\n', stderr);
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "foldcheck: %s: read error\n", path);
		nr_bad++;
	}
	if (!lineno && !allow_empty) {
		fprintf(stderr, "foldcheck: %s: empty\n", path);
		nr_bad++;
	}
	if (nr_bad > MAX_REPORTS)
		fprintf(stderr, "foldcheck: %s: %zu bad lines in all\n", path, nr_bad);
	free(line);
	free(prev);
	fclose(f);
	return nr_bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int c, allow_empty = 0, ret = 0;

	while ((c = getopt(argc, argv, "e")) != -1) {
		if (c != 'e') {
			fprintf(stderr, "usage: foldcheck [-e] FILE...\n");
			return 2;
		}
		allow_empty = 1;
	}
	if (optind == argc) {
		fprintf(stderr, "usage: foldcheck [-e] FILE...\n");
		return 2;
	}
	for (; optind < argc; optind++)
		ret |= check_file(argv[optind], allow_empty);
	return ret;
}
