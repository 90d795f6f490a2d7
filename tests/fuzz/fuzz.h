/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the libFuzzer harnesses of tests/fuzz/: each is one
 * LLVMFuzzerTestOneInput() that feeds its input to one of wprof's parsers
 * through the entry point wprof itself calls, then checks what the parser
 * promises (a broken promise aborts, which libFuzzer reports as a crash).
 * Built with clang -fsanitize=fuzzer,address,undefined by tests/fuzz.mk;
 * run by tests/fuzz/run.sh (make fuzz, and for a few seconds in make check).
 */
#ifndef WPROF_FUZZ_H
#define WPROF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A promise of the code under test did not hold: a crash for libFuzzer. */
#define FUZZ_ASSERT(cond)                                                                 \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, \
				#cond);                                                   \
			abort();                                                          \
		}                                                                         \
	} while (0)

/* @data as a NUL-terminated string (malloc'd: ASan sees reads past its end). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * A memfd holding exactly @data, for the parsers that open files: created
 * once, rewritten for each input. Its path is /proc/self/fd/N.
 */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	static int fd = -1;
	size_t off = 0;

	if (fd < 0)
		fd = memfd_create("wprof-fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0))
		abort();
	while (off < size) {
		ssize_t n = pwrite(fd, data + off, size - off, off);

		if (n <= 0)
			abort();
		off += n;
	}
	return fd;
}

/* A 64-bit value from @data at @i (wrapping around), for addresses to look up. */
static inline uint64_t fuzz_u64(const uint8_t *data, size_t size, size_t i)
{
	uint64_t v = 0;

	for (size_t k = 0; size && k < 8; k++)
		v = v << 8 | data[(i + k) % size];
	return v;
}

#endif /* WPROF_FUZZ_H */
