/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The calls inlined at an address, from DWARF (DW_TAG_inlined_subroutine):
 * what a profiler shows as frames of their own for code the compiler
 * folded into its caller.
 *
 * Each compilation unit is indexed once, on its first lookup: its inlined
 * calls' address ranges go into a sorted array, so that a lookup is a
 * binary search rather than a walk of the unit's DIEs (libdw's
 * dwarf_getscopes() walks them for every address).
 */
#ifndef WPROF_DWINLINE_H
#define WPROF_DWINLINE_H

#include <linux/types.h>
#include <elfutils/libdwfl.h>

struct dwinline;

/* For the DWARF of @mod, which must outlive the result. NULL with errno. */
struct dwinline *dwinline__new(Dwfl_Module *mod);

/*
 * The functions inlined at module address @addr, the outermost call first:
 * up to @max names, malloc'd, to @names (the caller frees them). A name is
 * the demangled linkage name (qualified: "ns::Klass::helper"), else the
 * plain name. Returns how many, 0 when none (or no DWARF).
 */
int dwinline__find(struct dwinline *di, __u64 addr, char **names, int max);

/* NULL is ok. */
void dwinline__free(struct dwinline *di);

#endif /* WPROF_DWINLINE_H */
