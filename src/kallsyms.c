// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/kallsyms lines look like
 *
 *	ffffffff81a3c2b0 T do_nanosleep
 *	ffffffffc06f1010 t xfs_iread	[xfs]
 *
 * kallsyms has no sizes, so a function is taken to end where the next
 * symbol starts. Data symbols are kept as nameless boundaries for that
 * reason: without them a function before a data object would swallow it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

/* No kernel function is this long; past it an address is in a gap, not in the symbol. */
#define KSYM_MAX_SPAN (1ULL << 20)
#define NO_NAME ((__u32)~0U)

struct ksym {
	__u64 addr;
	__u32 name; /* offset in names, NO_NAME for a boundary */
	__u32 rank; /* lower wins among symbols at one address */
};

/* The sections of the kernel's scheduler and lock code: [start, end) each. */
enum { SCHED_TEXT, LOCK_TEXT, NR_RANGES };
static const char *const range_names[NR_RANGES][2] = {
	{ "__sched_text_start", "__sched_text_end" },
	{ "__lock_text_start", "__lock_text_end" },
};

struct kallsyms {
	struct ksym *syms;
	size_t nr;
	size_t nr_text;
	char *names;
	__u64 ranges[NR_RANGES][2];
};

static void note_range(struct kallsyms *ks, __u64 addr, const char *name, size_t len)
{
	for (int r = 0; r < NR_RANGES; r++)
		for (int e = 0; e < 2; e++)
			if (strlen(range_names[r][e]) == len && !strncmp(name, range_names[r][e], len))
				ks->ranges[r][e] = addr;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * Several names at one address (aliases): prefer the one a reader knows,
 * i.e. fewer leading underscores, then global over local, then shorter.
 */
static __u32 sym_rank(char type, const char *name, size_t len)
{
	__u32 underscores = 0;

	while (name[underscores] == '_' && underscores < 15)
		underscores++;
	if (len > 0xffff)
		len = 0xffff;
	return underscores << 20 | (type == 'T' ? 0 : 1U << 19) | (__u32)len;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Parse "ADDR TYPE NAME[\t[MOD]]". Returns -EINVAL for lines that do not fit. */
static int parse_line(char *line, __u64 *addr, char *type, char **name, size_t *len)
{
	char *end;

	errno = 0;
	*addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ' || !end[1] || end[2] != ' ')
		return -EINVAL;
	*type = end[1];
	*name = end + 3;
	*len = strcspn(*name, " \t\n");
	return *len ? 0 : -EINVAL;
}

static int add_sym(struct kallsyms *ks, size_t *cap, size_t *names_len, size_t *names_cap,
		   __u64 addr, char type, const char *name, size_t len)
{
	struct ksym *sym;

	if (ks->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 4096;
		void *tmp = realloc(ks->syms, n * sizeof(*ks->syms));

		if (!tmp)
			return -ENOMEM;
		ks->syms = tmp;
		*cap = n;
	}
	sym = &ks->syms[ks->nr++];
	sym->addr = addr;
	sym->name = NO_NAME;
	sym->rank = ~0U; /* boundaries lose to any name at the same address */
	if (!is_text(type))
		return 0;
	if (*names_len + len + 1 > *names_cap) {
		size_t n = *names_cap ? *names_cap * 2 : 1 << 20;
		void *tmp;

		while (n < *names_len + len + 1)
			n *= 2;
		if (n > NO_NAME)
			return -E2BIG;
		tmp = realloc(ks->names, n);
		if (!tmp)
			return -ENOMEM;
		ks->names = tmp;
		*names_cap = n;
	}
	memcpy(ks->names + *names_len, name, len);
	ks->names[*names_len + len] = '\0';
	sym->name = *names_len;
	sym->rank = sym_rank(type, name, len);
	*names_len += len + 1;
	ks->nr_text++;
	return 0;
}

struct kallsyms *kallsyms__load(const char *path)
{
	size_t cap = 0, names_len = 0, names_cap = 0, linecap = 0, i, j;
	struct kallsyms *ks;
	bool nonzero = false;
	char *line = NULL, *name;
	FILE *f = NULL;
	__u64 addr;
	size_t len;
	char type;
	int err;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	while (getline(&line, &linecap, f) >= 0) {
		if (parse_line(line, &addr, &type, &name, &len))
			continue; /* tolerate lines we do not understand */
		if (addr)
			nonzero = true;
		note_range(ks, addr, name, len);
		err = add_sym(ks, &cap, &names_len, &names_cap, addr, type, name, len);
		if (err)
			goto cleanup;
	}
	if (ferror(f)) {
		err = -EIO;
		goto cleanup;
	}
	/* kptr_restrict hides every address behind zeros: nothing can be named. */
	if (ks->nr && !nonzero) {
		err = -EPERM;
		goto cleanup;
	}
	if (!ks->nr_text) {
		err = -ENOENT;
		goto cleanup;
	}
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	/* Keep the best entry of each address so that lookups see one per address. */
	for (i = 0, j = 0; i < ks->nr; i++) {
		if (j && ks->syms[j - 1].addr == ks->syms[i].addr)
			continue;
		ks->syms[j++] = ks->syms[i];
	}
	ks->nr = j;
	fclose(f);
	free(line);
	return ks;
cleanup:
	if (f)
		fclose(f);
	free(line);
	kallsyms__free(ks);
	errno = -err;
	return NULL;
}

const char *kallsyms__find(const struct kallsyms *ks, __u64 addr, __u64 *offset)
{
	size_t lo = 0, hi;
	const struct ksym *sym;

	if (!ks)
		return NULL;
	hi = ks->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &ks->syms[lo - 1];
	if (sym->name == NO_NAME || addr - sym->addr >= KSYM_MAX_SPAN)
		return NULL;
	if (offset)
		*offset = addr - sym->addr;
	return ks->names + sym->name;
}

bool kallsyms__is_sched(const struct kallsyms *ks, __u64 addr)
{
	for (int r = 0; ks && r < NR_RANGES; r++)
		if (addr >= ks->ranges[r][0] && addr < ks->ranges[r][1])
			return true;
	return false;
}

__u64 kallsyms__count(const struct kallsyms *ks)
{
	return ks ? ks->nr_text : 0;
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}
