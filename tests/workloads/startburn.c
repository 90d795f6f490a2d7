// SPDX-License-Identifier: GPL-2.0-only
/*
 * startburn: burns BURN_MS (default 30) of its own CPU time from its first
 * instruction of main on, in main -> burn_outer -> libc's qsort() ->
 * cmp_ints(), then exits. Run many times in a row (spawner -p), each run's
 * first milliseconds come before a profiler can have read the new
 * program's maps. qsort is libc's, built without frame pointers: a
 * frame-pointer walk from cmp_ints loses its callers. Prints nothing.
 *
 *	startburn [BURN_MS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NR 512

static int vals[NR];

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static int cmp_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static void burn_outer(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;
	unsigned int seed = 1;

	while (cpu_ns() < end) {
		for (int i = 0; i < NR; i++)
			vals[i] = rand_r(&seed);
		qsort(vals, NR, sizeof(vals[0]), cmp_ints);
	}
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 30;

	burn_outer((uint64_t)(ms > 0 ? ms : 30) * 1000000);
	return 0;
}
