// SPDX-License-Identifier: GPL-2.0-only
/*
 * A unit's index: one node per inlined call (its DIE, the call it is
 * inlined into, its depth) and one interval per address range of a call
 * (a call split by the optimizer has several). Calls nest, so the calls
 * at an address are the deepest interval that contains it and its
 * parents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "demangle.h"
#include "dwinline.h"
#include "hmap.h"

/* Deeper nests of DIEs or of inlined calls are not followed. */
#define MAX_DIE_DEPTH 128
#define MAX_CALLS 64
/* Past this many older intervals, stop looking back for one that contains an address. */
#define MAX_LOOKBACK 4096

struct node {
	Dwarf_Die die;
	int parent; /* the node of the call this one is inlined into, -1 if none */
	int depth;
};

struct interval {
	__u64 lo, hi; /* DWARF addresses, [lo, hi) */
	int node;
};

struct cu_index {
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct interval *ivs; /* sorted by lo */
	size_t nr_ivs, cap_ivs;
	__u64 *max_hi; /* max_hi[i]: largest hi among ivs[0..i] */
};

struct dwinline {
	Dwfl_Module *mod;
	struct hmap cus; /* CU DIE offset -> struct cu_index */
};

struct dwinline *dwinline__new(Dwfl_Module *mod)
{
	struct dwinline *di = calloc(1, sizeof(*di));

	if (di)
		di->mod = mod;
	return di;
}

static int add_node(struct cu_index *ci, Dwarf_Die *die, int parent)
{
	if (ci->nr_nodes == ci->cap_nodes) {
		size_t cap = ci->cap_nodes ? ci->cap_nodes * 2 : 64;
		struct node *nodes = realloc(ci->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		ci->nodes = nodes;
		ci->cap_nodes = cap;
	}
	ci->nodes[ci->nr_nodes] = (struct node){
		.die = *die,
		.parent = parent,
		.depth = parent < 0 ? 0 : ci->nodes[parent].depth + 1,
	};
	return ci->nr_nodes++;
}

static int add_interval(struct cu_index *ci, __u64 lo, __u64 hi, int node)
{
	if (ci->nr_ivs == ci->cap_ivs) {
		size_t cap = ci->cap_ivs ? ci->cap_ivs * 2 : 64;
		struct interval *ivs = realloc(ci->ivs, cap * sizeof(*ivs));

		if (!ivs)
			return -ENOMEM;
		ci->ivs = ivs;
		ci->cap_ivs = cap;
	}
	ci->ivs[ci->nr_ivs++] = (struct interval){ lo, hi, node };
	return 0;
}

/* DIEs that may hold code, hence inlined calls; the rest (types, variables) are skipped. */
static bool may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_partial_unit:
		return true;
	default:
		return false;
	}
}

/* Collect the inlined calls among the children of @die; @parent is the call they are in. */
static int walk(struct cu_index *ci, Dwarf_Die *die, int parent, int depth)
{
	Dwarf_Die child, unit;
	Dwarf_Attribute attr;
	int err = 0;

	if (depth > MAX_DIE_DEPTH || dwarf_child(die, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child), node = parent;

		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			node = add_node(ci, &child, parent);
			if (node < 0)
				return node;
			while (!err && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				if (hi > lo)
					err = add_interval(ci, lo, hi, node);
		}
		/* dwz moves shared DIEs to partial units, which a unit imports. */
		if (tag == DW_TAG_imported_unit && dwarf_attr(&child, DW_AT_import, &attr) &&
		    dwarf_formref_die(&attr, &unit))
			err = err ?: walk(ci, &unit, parent, depth + 1);
		else if (may_hold_code(tag))
			err = err ?: walk(ci, &child, node, depth + 1);
	} while (!err && !dwarf_siblingof(&child, &child));
	return err;
}

static int iv_cmp(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void cu_index__free(struct cu_index *ci)
{
	if (!ci)
		return;
	free(ci->nodes);
	free(ci->ivs);
	free(ci->max_hi);
	free(ci);
}

static struct cu_index *cu_index__build(Dwarf_Die *cu)
{
	struct cu_index *ci = calloc(1, sizeof(*ci));
	size_t i;

	if (!ci || walk(ci, cu, -1, 0))
		goto fail;
	if (ci->nr_ivs) /* qsort(NULL, 0) is undefined */
		qsort(ci->ivs, ci->nr_ivs, sizeof(*ci->ivs), iv_cmp);
	ci->max_hi = malloc((ci->nr_ivs ? ci->nr_ivs : 1) * sizeof(*ci->max_hi));
	if (!ci->max_hi)
		goto fail;
	for (i = 0; i < ci->nr_ivs; i++)
		ci->max_hi[i] = i && ci->max_hi[i - 1] > ci->ivs[i].hi ? ci->max_hi[i - 1]
								       : ci->ivs[i].hi;
	return ci;
fail:
	cu_index__free(ci);
	return NULL;
}

/* The name of an inlined call: its linkage name demangled (qualified), else its plain name. */
static char *call_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;
	char *res;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		name = dwarf_formstring(&attr);
		res = name ? demangle__name(name) : NULL;
		if (res)
			return res;
	}
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return strdup(name ? name : "[inlined]");
}

int dwinline__find(struct dwinline *di, __u64 addr, char **names, int max)
{
	size_t lo = 0, hi, i, steps;
	int best = -1, chain[MAX_CALLS], nr = 0, k;
	struct cu_index *ci;
	Dwarf_Addr bias;
	Dwarf_Die *cu;
	__u64 pc;
	void *old;

	cu = dwfl_module_addrdie(di->mod, addr, &bias);
	if (!cu)
		return 0;
	ci = hmap__get(&di->cus, dwarf_dieoffset(cu), 0);
	if (!ci) {
		ci = cu_index__build(cu);
		if (!ci)
			return 0;
		if (hmap__put(&di->cus, dwarf_dieoffset(cu), 0, ci, &old)) {
			cu_index__free(ci);
			return 0;
		}
	}
	pc = addr - bias;
	hi = ci->nr_ivs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->ivs[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, steps = 0; i > 0 && ci->max_hi[i - 1] > pc && steps < MAX_LOOKBACK;
	     i--, steps++) {
		const struct interval *iv = &ci->ivs[i - 1];

		if (pc < iv->hi && (best < 0 || ci->nodes[iv->node].depth > ci->nodes[best].depth))
			best = iv->node;
	}
	for (; best >= 0 && nr < MAX_CALLS; best = ci->nodes[best].parent)
		chain[nr++] = best;
	/* chain[] goes from the innermost out */
	for (k = 0; k < nr && k < max; k++) {
		names[k] = call_name(&ci->nodes[chain[nr - 1 - k]].die);
		if (!names[k])
			break;
	}
	return k;
}

void dwinline__free(struct dwinline *di)
{
	size_t i;

	if (!di)
		return;
	for (i = 0; i < di->cus.cap; i++)
		cu_index__free(di->cus.slots[i].val);
	hmap__clear(&di->cus);
	free(di);
}
