// SPDX-License-Identifier: GPL-2.0-only
/*
 * convoy: a service of WORKERS threads ("worker-0".."worker-N-1") that
 * serve a fixed number of REQUESTS between them, then exit: a fixed amount
 * of work, whatever N, as a CI smoke test runs one. Each request burns
 * CPU_US of CPU (serve) and sleeps SLEEP_US (wait_io, as a call to another
 * service would). The mode is the build under test:
 *
 *	good       as above
 *	regressed  each request also persists: store_commit_locked() takes one
 *	           global mutex and sleeps PERSIST_US under it, so N workers
 *	           queue on the lock (a convoy); with N = 1 it is only slower
 *	slowone    worker-0 alone sleeps twice SLEEP_US per request (a
 *	           regression confined to one thread)
 *
 *	convoy [-m MODE] [-n WORKERS] [-r REQUESTS] [-c CPU_US] [-s SLEEP_US]
 *	       [-p PERSIST_US]
 *
 * Prints "mode MODE workers N requests R elapsed_ns NS" at the end: what
 * ran is the tests' ground truth, not what a profiler makes of it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 256

enum mode { GOOD, REGRESSED, SLOWONE };

struct worker {
	pthread_t thread;
	int id;
	long requests;
};

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static enum mode mode = GOOD;
static long cpu_us = 200, sleep_us = 1000, persist_us = 1000;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_us_for(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts))
		;
}

/* Burn this thread's own CPU time: under load it takes longer, but costs the same CPU. */
__attribute__((noinline)) static uint64_t serve(long us)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + us * 1000ULL;
	volatile uint64_t acc = 1;

	do {
		for (int i = 0; i < 200; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return acc;
}

__attribute__((noinline)) static void wait_io(long us)
{
	sleep_us_for(us);
}

__attribute__((noinline)) static void persist(void)
{
	sleep_us_for(persist_us);
}

__attribute__((noinline)) static void store_commit_locked(void)
{
	pthread_mutex_lock(&store_lock);
	persist();
	pthread_mutex_unlock(&store_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long io_us = mode == SLOWONE && w->id == 0 ? 2 * sleep_us : sleep_us;
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", w->id);
	pthread_setname_np(pthread_self(), name);
	for (long i = 0; i < w->requests; i++) {
		serve(cpu_us);
		wait_io(io_us);
		if (mode == REGRESSED)
			store_commit_locked();
	}
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: convoy [-m good|regressed|slowone] [-n WORKERS] [-r REQUESTS] "
			"[-c CPU_US] [-s SLEEP_US] [-p PERSIST_US]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_WORKERS];
	static const char *const names[] = { "good", "regressed", "slowone" };
	long nr = 4, requests = 800;
	uint64_t start;
	int c;

	while ((c = getopt(argc, argv, "m:n:r:c:s:p:")) != -1) {
		switch (c) {
		case 'm':
			for (mode = GOOD; mode <= SLOWONE && strcmp(optarg, names[mode]); mode++)
				;
			if (mode > SLOWONE)
				return usage();
			break;
		case 'n':
			nr = atol(optarg);
			break;
		case 'r':
			requests = atol(optarg);
			break;
		case 'c':
			cpu_us = atol(optarg);
			break;
		case 's':
			sleep_us = atol(optarg);
			break;
		case 'p':
			persist_us = atol(optarg);
			break;
		default:
			return usage();
		}
	}
	if (nr < 1 || nr > MAX_WORKERS || requests < nr || cpu_us < 0 || sleep_us < 0 ||
	    persist_us < 0)
		return usage();
	start = now_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < nr; i++) {
		workers[i].id = i;
		/* the requests dealt out: the first ones take the remainder */
		workers[i].requests = requests / nr + (i < requests % nr);
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (long i = 0; i < nr; i++)
		pthread_join(workers[i].thread, NULL);
	printf("mode %s workers %ld requests %ld elapsed_ns %llu\n", names[mode], nr, requests,
	       (unsigned long long)(now_ns(CLOCK_MONOTONIC) - start));
	return 0;
}
