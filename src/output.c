// SPDX-License-Identifier: GPL-2.0-only
/* The outputs of a recording (-o or stdout), each in its format: see output.h. */
#include <errno.h>
#include <string.h>

#include "output.h"
#include "pprof.h"
#include "recfile.h"
#include "report.h"
#include "svg.h"
#include "util.h"

int outputs__open(struct outputs *o, const struct output_spec *specs, size_t nr)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < nr && i < MAX_OUTPUTS; i++) {
		struct output *out = &o->outs[o->nr++];
		int err;

		out->spec = &specs[i];
		if (!out->spec->path) {
			out->f = stdout;
			continue;
		}
		err = outfile__open(out->spec->path, &out->file);
		if (err)
			return err;
		out->f = out->file.f;
	}
	return 0;
}

int output__write(struct recording *r, enum output_format format, FILE *f)
{
	switch (format) {
	case FORMAT_JSON:
		return report__json(r, f);
	case FORMAT_THREADS:
		return report__threads(r, f);
	case FORMAT_SVG:
		return svg__write_recording(r, f);
	case FORMAT_PPROF:
		return pprof__write_recording(r, f);
	case FORMAT_WPROF:
		return recfile__save(r, f);
	default:
		return recording__write_folded(r, f);
	}
}

/* Write @r to the outputs for which @pick(format) says so; the first -errno. */
static int write_some(struct outputs *o, struct recording *r, bool (*pick)(enum output_format))
{
	int first = 0;

	for (size_t i = 0; i < o->nr; i++) {
		struct output *out = &o->outs[i];
		int err;

		if (!pick(out->spec->format))
			continue;
		err = output__write(r, out->spec->format, out->f);

		if (!err && out->f == stdout && fflush(stdout))
			err = -errno;
		if (!err && out->file.f)
			err = outfile__commit(&out->file); /* says what failed */
		else if (err)
			pr_err("cannot write %s: %s%s", out->spec->path ? out->spec->path : "to stdout",
			       strerror(-err), err == -EPIPE ? " (the reader went away)" :
					       err == -ENOSPC ? " (the disk is full)" : "");
		if (err && !first)
			first = err;
	}
	return first;
}

static bool is_wprof(enum output_format f)
{
	return f == FORMAT_WPROF;
}

/* The formats whose stacks say their thread (pid, tid): not merged by --group none. */
static bool is_per_thread(enum output_format f)
{
	return f == FORMAT_WPROF || f == FORMAT_JSON || f == FORMAT_THREADS;
}

static bool is_merged(enum output_format f)
{
	return f == FORMAT_FOLDED || f == FORMAT_PPROF;
}

static bool is_svg(enum output_format f)
{
	return f == FORMAT_SVG;
}

static bool is_other(enum output_format f)
{
	return f != FORMAT_WPROF && f != FORMAT_SVG;
}

int outputs__write(struct outputs *o, struct recording *r, enum group_by g)
{
	int first, err;

	/*
	 * a saved recording keeps every thread's lines: report can group them
	 * any way; json's stacks (and the threads table) are each a thread's,
	 * their names as grouped, but for none, which has no name to give
	 */
	first = write_some(o, r, g == GROUP_NONE ? is_per_thread : is_wprof);
	if (g != GROUP_THREAD) {
		err = recording__group(r, g);
		if (err) {
			pr_err("cannot group the stacks by %s: %s", group__name(g), strerror(-err));
			return first ? first : err;
		}
	}
	/* flame graphs first: what they merge is counted in the other outputs' losses */
	err = write_some(o, r, is_svg);
	first = first ? first : err;
	err = write_some(o, r, g == GROUP_NONE ? is_merged : is_other);
	return first ? first : err;
}

void outputs__abort(struct outputs *o)
{
	for (size_t i = 0; i < o->nr; i++)
		outfile__abort(&o->outs[i].file);
}
