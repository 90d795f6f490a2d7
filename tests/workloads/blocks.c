// SPDX-License-Identifier: GPL-2.0-only
/*
 * blocks: two threads told apart only by how they block. "short" sleeps
 * COUNT times SHORT_US in short_naps(); "long" sleeps once LONG_US in
 * long_nap(). Both start together after a barrier (the go signal) and do
 * nothing else, so under `wprof record -- blocks` the sleep stacks of the
 * two hold exactly COUNT and 1 blocks.
 *
 *	blocks [-c COUNT] [-s SHORT_US] [-l LONG_US] [-r REPORT]
 *
 * Report: one line per thread: "NAME TID sleeps min_ns max_ns sum_ns", the
 * shortest and longest sleep and all of them as the thread timed them
 * (CLOCK_MONOTONIC around nanosleep).
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
#include <sys/syscall.h>

struct napper {
	const char *name;
	void (*naps)(struct napper *n);
	long count, us;
	pthread_t thread;
	pid_t tid;
	uint64_t sleeps, min_ns, max_ns, sum_ns;
};

static pthread_barrier_t go;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The direct caller of libc's nanosleep is skipped by a frame-pointer walk
 * (see longsleep.c), so each thread's own function calls it through this.
 */
__attribute__((noinline)) void nap(struct napper *n)
{
	struct timespec ts = { .tv_sec = n->us / 1000000, .tv_nsec = n->us % 1000000 * 1000 };
	uint64_t t0 = now_ns(), d;

	nanosleep(&ts, NULL);
	d = now_ns() - t0;
	if (!n->sleeps || d < n->min_ns)
		n->min_ns = d;
	if (d > n->max_ns)
		n->max_ns = d;
	n->sum_ns += d;
	n->sleeps++;
}

__attribute__((noinline)) void short_naps(struct napper *n)
{
	for (long i = 0; i < n->count; i++)
		nap(n);
}

__attribute__((noinline)) void long_nap(struct napper *n)
{
	nap(n);
}

static void *napper_main(void *arg)
{
	struct napper *n = arg;

	pthread_setname_np(pthread_self(), n->name);
	n->tid = syscall(SYS_gettid);
	pthread_barrier_wait(&go);
	n->naps(n);
	return NULL;
}

int main(int argc, char **argv)
{
	struct napper nappers[2] = {
		{ .name = "short", .naps = short_naps, .count = 50, .us = 3000 },
		{ .name = "long", .naps = long_nap, .count = 1, .us = 100000 },
	};
	const char *report = NULL;
	int c, i;
	FILE *f;

	while ((c = getopt(argc, argv, "c:s:l:r:")) != -1) {
		switch (c) {
		case 'c':
			nappers[0].count = atol(optarg);
			break;
		case 's':
			nappers[0].us = atol(optarg);
			break;
		case 'l':
			nappers[1].us = atol(optarg);
			break;
		case 'r':
			report = optarg;
			break;
		default:
			nappers[0].count = -1;
		}
	}
	if (nappers[0].count < 0 || nappers[0].us <= 0 || nappers[1].us <= 0 || optind != argc) {
		fprintf(stderr, "usage: blocks [-c COUNT] [-s SHORT_US] [-l LONG_US] [-r REPORT]\n");
		return 2;
	}

	pthread_barrier_init(&go, NULL, 2);
	for (i = 0; i < 2; i++) {
		int err = pthread_create(&nappers[i].thread, NULL, napper_main, &nappers[i]);

		if (err) {
			fprintf(stderr, "blocks: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(nappers[i].thread, NULL);

	if (!report)
		return 0;
	f = fopen(report, "w");
	if (!f) {
		perror(report);
		return 1;
	}
	for (i = 0; i < 2; i++)
		fprintf(f, "%s %d %llu %llu %llu %llu\n", nappers[i].name, nappers[i].tid,
			(unsigned long long)nappers[i].sleeps, (unsigned long long)nappers[i].min_ns,
			(unsigned long long)nappers[i].max_ns, (unsigned long long)nappers[i].sum_ns);
	return fclose(f) ? 1 : 0;
}
