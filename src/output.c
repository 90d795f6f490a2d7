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

int outputs__write(struct outputs *o, struct recording *r)
{
	int first = 0;

	/* flame graphs first: what they merge is counted in the other outputs' losses */
	for (size_t k = 0; k < 2 * o->nr; k++) {
		size_t i = k % o->nr;
		struct output *out = &o->outs[i];
		int err;

		if ((k < o->nr) != (out->spec->format == FORMAT_SVG))
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

void outputs__abort(struct outputs *o)
{
	for (size_t i = 0; i < o->nr; i++)
		outfile__abort(&o->outs[i].file);
}
