/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF counters by name, as saved recordings and `-f json` key them. */
#ifndef WPROF_STATNAMES_H
#define WPROF_STATNAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "wprof.h"

/*
 * The name of statistic @i ("samples", "cut_3"), in @buf when it is made
 * up; NULL for an index out of range, or a statistic nobody named yet
 * (test_recfile fails on one: name it in statnames.c).
 */
const char *stat__name(int i, char *buf, size_t size);
/* The index of the statistic named @name, or -1 (one this build does not have). */
int stat__index(const char *name);

#endif /* WPROF_STATNAMES_H */
