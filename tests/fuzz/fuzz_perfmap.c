// SPDX-License-Identifier: GPL-2.0-only
/*
 * The perf map parser, through the file it reads: the input is this
 * process's /tmp/perf-PID.map, read whole, then again after growing by
 * half (the incremental path a runtime's appends take), and looked up at
 * addresses from the input and at every entry's start.
 */
#include <fcntl.h>

#include "fuzz.h"
#include "perfmap.h"

static char map_path[64];

static void remove_map(void)
{
	unlink(map_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	atexit(remove_map);
	return 0;
}

static void write_map(const uint8_t *data, size_t size, bool append)
{
	int fd = open(map_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
				(append ? O_APPEND : O_TRUNC), 0600);

	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
	close(fd);
}

static void lookups(const struct perfmap *pm, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < 8; i++) {
		const char *name = perfmap__find(pm, fuzz_u64(data, size, i * 8));

		FUZZ_ASSERT(!name || strlen(name) < size + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap__new(getpid());
	size_t half = size / 2;
	int ret;

	FUZZ_ASSERT(pm);
	write_map(data, half, false);
	ret = perfmap__refresh(pm);
	FUZZ_ASSERT(ret >= 0);
	lookups(pm, data, size);
	write_map(data + half, size - half, true);
	ret = perfmap__refresh(pm);
	FUZZ_ASSERT(ret >= 0);
	lookups(pm, data, size);
	FUZZ_ASSERT(perfmap__count(pm) <= size / 4 + 1); /* "0 1 x\n" is the shortest line */
	perfmap__free(pm);
	return 0;
}
