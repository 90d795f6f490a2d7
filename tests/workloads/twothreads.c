// SPDX-License-Identifier: GPL-2.0-only
/*
 * twothreads: two threads named "alpha" and "beta", each looping { burn
 * BURN_MS in its own function; sleep SLEEP_MS }, for `wprof record -t TID`:
 * profiling one of them must show only its name and functions.
 *
 *	twothreads [-n SECONDS] [-b BURN_MS] [-s SLEEP_MS]
 *
 * Prints "alpha TID", "beta TID", then "ready" on stdout once both run.
 * Runs until -n elapses or SIGTERM/SIGINT.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, CPU_SET */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile sig_atomic_t stop;
static double run_s;
static long burn_ms = 20, sleep_ms = 30;
static pthread_barrier_t started;

struct worker {
	const char *name;
	uint64_t (*burn)(uint64_t ns);
	pid_t tid;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t spin(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t acc = 1;

	do {
		for (int i = 0; i < 100000; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return acc;
}

/* Two distinct functions so a stack tells which thread burned. */
__attribute__((noinline)) uint64_t alpha_burn(uint64_t ns)
{
	return spin(ns) + 1;
}

__attribute__((noinline)) uint64_t beta_burn(uint64_t ns)
{
	return spin(ns) + 2;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t deadline_ns = UINT64_MAX;
	struct timespec nap = { .tv_sec = sleep_ms / 1000, .tv_nsec = sleep_ms % 1000 * 1000000L };

	pthread_setname_np(pthread_self(), w->name);
	w->tid = syscall(SYS_gettid);
	if (run_s > 0)
		deadline_ns = now_ns(CLOCK_MONOTONIC) + (uint64_t)(run_s * 1e9);
	pthread_barrier_wait(&started);

	while (!stop && now_ns(CLOCK_MONOTONIC) < deadline_ns) {
		w->burn(burn_ms * 1000000ULL);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct worker workers[] = { { "alpha", alpha_burn, 0 }, { "beta", beta_burn, 0 } };
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t threads[2];
	int c, i;

	while ((c = getopt(argc, argv, "n:b:s:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 'b':
			burn_ms = atol(optarg);
			break;
		case 's':
			sleep_ms = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: twothreads [-n SECONDS] [-b BURN_MS] [-s SLEEP_MS]\n");
			return 2;
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	pthread_barrier_init(&started, NULL, 3);
	for (i = 0; i < 2; i++) {
		int err = pthread_create(&threads[i], NULL, worker_main, &workers[i]);

		if (err) {
			fprintf(stderr, "twothreads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&started);
	for (i = 0; i < 2; i++)
		printf("%s %d\n", workers[i].name, workers[i].tid);
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
