// SPDX-License-Identifier: GPL-2.0-only
/*
 * runq: NR threads (named "spin0".."spinN-1") that never block, all pinned
 * to CPU 0, for SECONDS of wall time. They share one CPU, so each is
 * runnable-but-waiting most of the time: off-CPU time that wprof must tag
 * off-cpu:runqueue. Each thread measures its own run and wait time over its
 * spin loop from /proc/self/task/TID/schedstat (the kernel's own ground truth).
 *
 *	runq [-n SECONDS] [-t NR] [-r REPORT] [-y]
 *
 * -y: each thread yields the CPU every few microseconds (sched_yield()): a
 * storm of runnable switch-outs, for the bench.
 *
 * Report: one line per thread: "NAME TID run_ns wait_ns wall_ns".
 * Prints "ready" on stdout when all threads spin (unless -q).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, CPU_SET */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define MAX_THREADS 8

struct spinner {
	pthread_t thread;
	char name[16];
	pid_t tid;
	uint64_t run_ns, wait_ns, wall_ns;
};

static double run_s = 3;
static int quiet;
static int yield_often; /* -y */
static pthread_barrier_t started;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void schedstat(pid_t tid, uint64_t *run_ns, uint64_t *wait_ns)
{
	unsigned long long run = 0, wait = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			run = wait = 0;
		fclose(f);
	}
	*run_ns = run;
	*wait_ns = wait;
}

__attribute__((noinline)) uint64_t spin_until(uint64_t end_ns)
{
	volatile uint64_t acc = 1;

	do {
		for (int i = 0; i < (yield_often ? 1000 : 100000); i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		if (yield_often)
			sched_yield();
	} while (now_ns() < end_ns);
	return acc;
}

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;
	uint64_t run0, wait0, run1, wait1, t0;

	pthread_setname_np(pthread_self(), s->name);
	s->tid = syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	t0 = now_ns();
	schedstat(s->tid, &run0, &wait0);
	spin_until(t0 + (uint64_t)(run_s * 1e9));
	schedstat(s->tid, &run1, &wait1);
	s->wall_ns = now_ns() - t0;
	s->run_ns = run1 - run0;
	s->wait_ns = wait1 - wait0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct spinner spinners[MAX_THREADS] = {};
	const char *report = NULL;
	pthread_attr_t attr;
	cpu_set_t cpu0;
	int c, i, nr = 3;
	FILE *f;

	while ((c = getopt(argc, argv, "n:t:r:qy")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 't':
			nr = atoi(optarg);
			break;
		case 'r':
			report = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'y':
			yield_often = 1;
			break;
		default:
			nr = 0;
		}
	}
	if (nr < 1 || nr > MAX_THREADS || run_s <= 0) {
		fprintf(stderr, "usage: runq [-n SECONDS] [-t NR (1..%d)] [-r REPORT] [-q] [-y]\n",
			MAX_THREADS);
		return 2;
	}

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpu0), &cpu0);
	pthread_barrier_init(&started, NULL, nr + 1);
	for (i = 0; i < nr; i++) {
		int err;

		snprintf(spinners[i].name, sizeof(spinners[i].name), "spin%d", i);
		err = pthread_create(&spinners[i].thread, &attr, spinner_main, &spinners[i]);
		if (err) {
			fprintf(stderr, "runq: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&started);
	if (!quiet) {
		printf("ready\n");
		fflush(stdout);
	}
	for (i = 0; i < nr; i++)
		pthread_join(spinners[i].thread, NULL);

	if (!report)
		return 0;
	f = fopen(report, "w");
	if (!f) {
		perror(report);
		return 1;
	}
	for (i = 0; i < nr; i++)
		fprintf(f, "%s %d %llu %llu %llu\n", spinners[i].name, spinners[i].tid,
			(unsigned long long)spinners[i].run_ns,
			(unsigned long long)spinners[i].wait_ns,
			(unsigned long long)spinners[i].wall_ns);
	return fclose(f) ? 1 : 0;
}
