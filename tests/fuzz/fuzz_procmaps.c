// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/PID/maps parser (procmaps__parse(), what procmaps__read()
 * runs on the kernel's text): on success the maps are sorted by start and
 * every lookup returns a mapping that holds the address.
 */
#include "fuzz.h"
#include "procmaps.h"

static void check_find(const struct proc_maps *m, __u64 addr)
{
	const struct proc_map *hit = procmaps__find(m, addr);

	FUZZ_ASSERT(!hit || (hit->start <= addr && addr < hit->end));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps m;
	FILE *f;

	if (!size)
		return 0; /* fmemopen() of 0 bytes fails */
	f = fmemopen((void *)data, size, "r");
	FUZZ_ASSERT(f);
	if (!procmaps__parse(f, &m)) {
		for (size_t i = 0; i < m.nr; i++) {
			const struct proc_map *p = &m.maps[i];

			FUZZ_ASSERT(!i || m.maps[i - 1].start <= p->start);
			FUZZ_ASSERT(!p->path || strlen(p->path) <= size);
			check_find(&m, p->start);
			check_find(&m, p->end - 1);
			check_find(&m, p->end);
		}
		check_find(&m, fuzz_u64(data, size, 0));
		procmaps__free(&m);
		FUZZ_ASSERT(!m.maps && !m.nr);
	}
	fclose(f);
	return 0;
}
