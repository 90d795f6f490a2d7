// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_inline: inlined functions for `wprof record --inline`. Built -O2 by
 * tests/sym.mk (not with the workloads' -fno-inline). A thread named
 * "inliner" alternates, for SECONDS, two ~10 ms phases:
 *	inline_outer() -> mid_helper() -> hot_helper()     (both inlined)
 *	call_outer() -> via_inline() -> leaf_burn()         (via_inline inlined)
 * hot_helper() is a chain of multiplications, where nearly all of the
 * first phase's cycles go; leaf_burn() is a real function called from the
 * inlined code, so naming via_inline needs the inline lookup at a return
 * address, not only at the sampled instruction.
 *
 *	sym_inline [SECONDS]
 *
 * Prints "ready PID TID" once the worker runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define PHASE_NS 10000000ULL

static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t hot_helper(uint64_t x)
{
	/* a dependent chain: neither vectorized nor folded away */
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static inline __attribute__((always_inline)) uint64_t mid_helper(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = hot_helper(x) ^ (uint64_t)i;
	return x;
}

/* noipa: no clones, no inlining, no cross-function shortcuts. */
__attribute__((noipa)) uint64_t inline_outer(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, acc = 1;

	do
		acc = mid_helper(acc);
	while (cpu_ns() < end);
	return acc;
}

__attribute__((noipa)) uint64_t leaf_burn(uint64_t x)
{
	for (int i = 0; i < 64000; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	return x;
}

static inline __attribute__((always_inline)) uint64_t via_inline(uint64_t x)
{
	x = leaf_burn(x);
	/* work after the call, so that the call is not a tail call */
	return x ^ (x >> 7);
}

__attribute__((noipa)) uint64_t call_outer(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, acc = 1;

	do
		acc = via_inline(acc);
	while (cpu_ns() < end);
	return acc;
}

static void *worker_main(void *arg)
{
	uint64_t end_ns = cpu_ns() + (uint64_t)(*(double *)arg * 1e9);

	pthread_setname_np(pthread_self(), "inliner");
	printf("ready %d %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	/* only CPU: thread CPU time is the wall time of the run */
	while (cpu_ns() < end_ns) {
		sink = inline_outer(PHASE_NS);
		sink = call_outer(PHASE_NS);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	pthread_t thread;

	if (argc > 2 || seconds <= 0) {
		fprintf(stderr, "usage: sym_inline [SECONDS]\n");
		return 2;
	}
	if (pthread_create(&thread, NULL, worker_main, &seconds)) {
		fprintf(stderr, "sym_inline: pthread_create failed\n");
		return 1;
	}
	pthread_join(thread, NULL);
	return 0;
}
