// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark helper, preloaded into bpftrace only. bpftrace 0.17 exits when it
 * cannot raise RLIMIT_MEMLOCK, which containers often forbid and which
 * kernels >= 5.11 do not need (BPF memory is charged to the memory cgroup).
 * Pretend the raise worked; every other limit goes to libc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/resource.h>

int setrlimit(__rlimit_resource_t res, const struct rlimit *rl)
{
	int (*real)(__rlimit_resource_t, const struct rlimit *) = dlsym(RTLD_NEXT, "setrlimit");

	if (res == RLIMIT_MEMLOCK)
		return 0;
	return real ? real(res, rl) : -1;
}

int setrlimit64(__rlimit_resource_t res, const struct rlimit64 *rl)
{
	int (*real)(__rlimit_resource_t, const struct rlimit64 *) = dlsym(RTLD_NEXT, "setrlimit64");

	if (res == RLIMIT_MEMLOCK)
		return 0;
	return real ? real(res, rl) : -1;
}
