// SPDX-License-Identifier: GPL-2.0-only
/*
 * ELF files as the symbolizer takes them (src/symbolize.c): the input is
 * a file, opened by elfsyms__new() and indexed with the symbolizer's own
 * debug path, keeping the fd for DWARF; then file offsets spread over the
 * input are turned into addresses, named (demangling C++ and Rust), and
 * their inlined calls looked up in DWARF (src/dwinline.c), as --inline
 * does; last the CFI is opened. The file's path is in a directory that
 * does not exist, so no .gnu_debuglink of the input finds a file; build-id
 * lookups under /usr/lib/debug run as they do for wprof.
 */
#include <fcntl.h>

#include "elfsyms.h"
#include "fuzz.h"

#define MAX_INLINES 32

static char debug_path[] = ":.debug:/usr/lib/debug"; /* symbolize.c's DEFAULT_DEBUG_PATH */
static char *debuginfo_path = debug_path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsetenv("DEBUGINFOD_URLS"); /* no network: libdw asks debuginfod only when it is set */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size), dfd = dup(fd);
	const char *names[MAX_INLINES];
	struct elfsyms *e;
	Dwarf_CFI *cfi;
	__u64 bias;

	FUZZ_ASSERT(dfd >= 0);
	e = elfsyms__new(dfd, "/nonexistent-wprof-fuzz/lib/fuzz.so"); /* takes dfd */
	if (!e)
		return 0;
	elfsyms__index(e, &debuginfo_path, true);
	FUZZ_ASSERT(elfsyms__indexed(e));
	for (size_t i = 0; i < 17; i++) {
		__u64 off = size * i / 16, addr;
		const char *name;
		int n;

		for (int exec = 0; exec < 2; exec++) {
			if (!elfsyms__addr(e, off, exec, &addr))
				continue;
			name = elfsyms__find(e, addr);
			FUZZ_ASSERT(!name || strlen(name) < (1U << 20));
			n = elfsyms__inlines(e, addr, names, MAX_INLINES);
			FUZZ_ASSERT(n >= 0 && n <= MAX_INLINES);
			for (int k = 0; k < n; k++)
				FUZZ_ASSERT(names[k] && strlen(names[k]) < (1U << 20));
		}
	}
	cfi = elfsyms__cfi(e, &bias);
	(void)cfi;
	elfsyms__free(e);
	return 0;
}
