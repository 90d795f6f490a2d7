// SPDX-License-Identifier: GPL-2.0-only
/*
 * shortruns: N threads named "run0".."runN-1" that loop { spin RUN_US on the
 * monotonic clock; nanosleep SLEEP_US }: tens of thousands of short runs a
 * second, where a few microseconds misplaced at each switch or wakeup are
 * several percent of a thread's on-CPU or run-queue time. For comparing
 * wprof's per-thread times with /proc/PID/task/TID/schedstat (see README:
 * schedstat itself is off for such threads) or with another tracer.
 *
 *	shortruns [-n THREADS] [-r RUN_US] [-s SLEEP_US]
 *
 * Defaults: 1 thread, 50 us runs, 100 us sleeps. Prints "ready" once the
 * threads are started, then runs until killed.
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

static long run_us = 50, sleep_us = 100;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *worker(void *arg)
{
	struct timespec nap = { .tv_sec = sleep_us / 1000000, .tv_nsec = sleep_us % 1000000 * 1000 };
	char name[16];

	snprintf(name, sizeof(name), "run%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		uint64_t t0 = now_ns();

		while (now_ns() - t0 < (uint64_t)run_us * 1000)
			;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = 1;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:s:")) != -1) {
		switch (opt) {
		case 'n':
			n = atol(optarg);
			break;
		case 'r':
			run_us = atol(optarg);
			break;
		case 's':
			sleep_us = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: shortruns [-n THREADS] [-r RUN_US] [-s SLEEP_US]\n");
			return 2;
		}
	}
	if (n < 1 || run_us < 0 || sleep_us < 0) {
		fprintf(stderr, "shortruns: -n needs at least 1 thread, -r and -s 0 or more us\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, (void *)(intptr_t)i)) {
			fprintf(stderr, "shortruns: cannot create thread %ld\n", i);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
