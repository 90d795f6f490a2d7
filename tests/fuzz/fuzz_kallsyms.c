// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kallsyms parser, through kallsyms__load() of a file holding the
 * input, then lookups: a name found is a string of the input, its offset
 * within the symbol's span.
 */
#include "fuzz.h"
#include "kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	struct kallsyms *ks;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ks = kallsyms__load(path);
	if (!ks)
		return 0;
	FUZZ_ASSERT(kallsyms__count(ks) > 0);
	for (size_t i = 0; i < 16; i++) {
		__u64 addr = fuzz_u64(data, size, i * 5), off = ~0ULL;
		const char *name = kallsyms__find(ks, addr, &off);

		FUZZ_ASSERT(!name || (strlen(name) < size && off < (1ULL << 20)));
		kallsyms__is_sched(ks, addr);
	}
	kallsyms__free(ks);
	return 0;
}
