// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbol names come from the ELF files of other users' processes: each
 * demangler on the input (C++ through libstdc++'s __cxa_demangle() and
 * wprof's cut-down of its output, Rust legacy and v0 in wprof).
 */
#include "demangle.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = fuzz_str(data, size);
	char *outs[4] = {
		demangle__name(name),
		demangle__cxx_strip(name),
		demangle__rust_legacy(name),
		demangle__rust_v0(name),
	};

	for (int i = 0; i < 4; i++)
		free(outs[i]);
	free(name);
	return 0;
}
