/* SPDX-License-Identifier: GPL-2.0-only */
/* The summary on stderr, `-f threads` and `-f json` (report.c). */
#ifndef WPROF_REPORT_H
#define WPROF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "recording.h"

/*
 * The summary on stderr: the window, the busiest processes and threads,
 * every loss, the hints; @stats: also how the recording went (--stats).
 */
void report__summary(const struct recording *r, FILE *f, bool stats);
/* --format threads: the per-thread table. 0 or -EIO. */
int report__threads(const struct recording *r, FILE *f);
/*
 * --format json: threads, histograms, stacks with count/total/max, losses.
 * The lines must have ids (r->ids). 0 or -errno.
 */
int report__json(const struct recording *r, FILE *f);

/* --stats: switches by kind and the BPF time of each kind */
void report__switch_kinds(const struct recording *r, FILE *f);

#endif /* WPROF_REPORT_H */
