// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded text as a recording of lines alone, for `wprof report`: a
 * hand-edited or another tool's file drawn as wprof draws its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "foldread.h"
#include "recline.h"
#include "recording.h"
#include "util.h"

/* Whether @stack's last frame, not its first, is a tag (--tag-leaf's lines). */
static bool tag_at_leaf(const char *stack, size_t len)
{
	const char *semi = memchr(stack, ';', len), *last = memrchr(stack, ';', len);

	if (!semi || rec_kind__of(stack, semi - stack) != REC_OTHER)
		return false;
	return rec_kind__of(last + 1, stack + len - last - 1) != REC_OTHER;
}

static int read_lines(struct recording *r, struct foldread *fr, const char *name)
{
	struct rec_splitter sp = {};
	char *stack = NULL;
	bool cut, first = true;
	size_t len;
	__u64 w;
	int err;

	while ((err = foldread__next(fr, &stack, &len, &w, &cut)) > 0) {
		if (first)
			r->tag_leaf = tag_at_leaf(stack, len);
		first = false;
		r->prof.stacks_cut_on_read += cut;
		err = rec_splitter__add(&sp, r->lines, stack, len, 0, 0, w, 1, w);
		if (err)
			break;
	}
	rec_splitter__free(&sp);
	/* a file that is neither, from its first line: say both */
	if (err == -EINVAL && fr->lineno == 1)
		pr_err("%s: not a wprof recording, nor folded text (its first line is no "
		       "'frame;frame;... WEIGHT')", name);
	else if (err == -EINVAL)
		pr_err("%s:%zu: not a folded line ('frame;frame;... WEIGHT')", name, fr->lineno);
	else if (err)
		pr_err("cannot read %s: %s", name, strerror(-err));
	else if (first)
		pr_err("%s: not a wprof recording, nor folded text (no stacks)", name);
	return err ? err : first ? -EINVAL : 0;
}

int recording__from_folded(const char *path, struct recording *r)
{
	bool std_in = !strcmp(path, "-");
	const char *name = std_in ? "standard input" : path;
	FILE *f = std_in ? stdin : fopen(path, "re");
	struct foldread fr;
	int err;

	memset(r, 0, sizeof(*r));
	if (!f) {
		err = -errno;
		pr_err("cannot open %s: %s", path, strerror(-err));
		return err;
	}
	r->lines = folded__new();
	err = r->lines ? foldread__init(&fr, f, NULL, NULL, 0) : -ENOMEM;
	if (err) {
		pr_err("out of memory reading %s", name);
	} else {
		err = read_lines(r, &fr, name);
		foldread__free(&fr);
	}
	if (!std_in)
		fclose(f);
	snprintf(r->info.target, sizeof(r->info.target), "%s", name);
	if (err)
		recording__free(r);
	return err;
}
