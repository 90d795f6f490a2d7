/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_REPORT_H
#define WPROF_REPORT_H

#include <stdio.h>

#include "folded.h"
#include "opts.h"
#include "profile.h"
#include "session.h"
#include "symbolize.h"

/* The summary on stderr: per process and thread, the window, every loss. */
void report__summary(const struct profile *p, struct session *s, const struct symbolizer *sym,
		     FILE *f);
/* --format threads: the per-thread table. 0 or -EIO. */
int report__threads(const struct profile *p, FILE *f);
/* --format json: threads, histograms, stacks with count/total/max, losses. 0 or -errno. */
int report__json(const struct profile *p, struct session *s, const struct symbolizer *sym,
		 const struct record_opts *o, const struct folded *stacks, FILE *f);

/* --stats: switches by kind and the BPF time of each kind */
void report__switch_kinds(struct session *s, FILE *f);

#endif /* WPROF_REPORT_H */
