// SPDX-License-Identifier: GPL-2.0-only
/*
 * pool: a process of many threads, as a server's pool is: IDLE threads
 * ("idleN") that wait on a condition variable nobody signals, and BUSY
 * threads ("busyK", K = 1..BUSY) that each burn K * 8% of every 10 ms and
 * sleep the rest, until SIGTERM or SECONDS pass. Which threads are busiest
 * is for the reader to measure (each thread's schedstat): the duty cycles
 * only keep them apart.
 *
 *	pool [-i IDLE] [-b BUSY] [-d SECONDS]
 *
 * Prints "thread NAME TID" for each thread, then "ready".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define PERIOD_NS 10000000ULL

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t started;
static double run_s = 30;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t burn_until(uint64_t end_ns)
{
	volatile uint64_t acc = 1;

	do {
		for (int i = 0; i < 2000; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
	} while (now_ns() < end_ns);
	return acc;
}

static void announce(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&lock);
	printf("thread %s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_mutex_unlock(&lock);
}

static void *idle_main(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "idle%ld", (long)(intptr_t)arg);
	announce(name);
	pthread_barrier_wait(&started);
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

static void *busy_main(void *arg)
{
	long k = (long)(intptr_t)arg;
	uint64_t end, t;
	char name[16];

	snprintf(name, sizeof(name), "busy%ld", k);
	announce(name);
	pthread_barrier_wait(&started);
	end = now_ns() + (uint64_t)(run_s * 1e9);
	for (t = now_ns(); t < end; t += PERIOD_NS) {
		struct timespec ts;

		burn_until(t + PERIOD_NS * 8 * k / 100);
		ts.tv_sec = (t + PERIOD_NS) / 1000000000ULL;
		ts.tv_nsec = (t + PERIOD_NS) % 1000000000ULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long idle = 90, busy = 6;
	pthread_t th;
	int opt;

	while ((opt = getopt(argc, argv, "i:b:d:")) != -1) {
		switch (opt) {
		case 'i':
			idle = atol(optarg);
			break;
		case 'b':
			busy = atol(optarg);
			break;
		case 'd':
			run_s = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: pool [-i IDLE] [-b BUSY] [-d SECONDS]\n");
			return 2;
		}
	}
	if (idle < 0 || busy < 1 || busy > 12 || run_s <= 0) {
		fprintf(stderr, "pool: bad arguments\n");
		return 2;
	}
	pthread_barrier_init(&started, NULL, idle + busy + 1);
	for (long i = 0; i < idle; i++)
		if (pthread_create(&th, NULL, idle_main, (void *)(intptr_t)i))
			return 1;
	for (long k = 1; k <= busy; k++)
		if (pthread_create(&th, NULL, busy_main, (void *)(intptr_t)k))
			return 1;
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned int)run_s + 1);
	return 0;
}
