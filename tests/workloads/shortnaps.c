// SPDX-License-Identifier: GPL-2.0-only
/*
 * shortnaps: threads named "alt" that alternate two short sleeps from two
 * call sites, for the stacks of intervals walked as a sample (--exact-above):
 * nap_short() sleeps SHORT_US, nap_long() LONG_US, both well under 1 ms, so
 * by default most of them are not walked and the walked ones weigh for the
 * rest. Each thread times its own calls; at the end (-n SECONDS, or SIGTERM)
 * the process prints the summed time in each site:
 *	site short NS
 *	site long NS
 *
 *	shortnaps [-t THREADS] [-s SHORT_US] [-l LONG_US] [-n SECONDS]
 *
 * Prints "ready" once every thread runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#define MAX_THREADS 64

static long short_us = 400, long_us = 800;
static atomic_ullong site_ns[2];
static atomic_int stop, started;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void nap(long us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = us * 1000 };

	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) void nap_short(void)
{
	unsigned long long t = now_ns();

	nap(short_us);
	atomic_fetch_add(&site_ns[0], now_ns() - t);
}

static __attribute__((noinline)) void nap_long(void)
{
	unsigned long long t = now_ns();

	nap(long_us);
	atomic_fetch_add(&site_ns[1], now_ns() - t);
}

static void *alternate(void *arg)
{
	(void)arg;
	/* sleeps as long as asked, not 50 us more */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_setname_np(pthread_self(), "alt");
	atomic_fetch_add(&started, 1);
	while (!atomic_load(&stop)) {
		nap_short();
		nap_long();
	}
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	int c, nr = 4;
	double secs = 0;

	while ((c = getopt(argc, argv, "t:s:l:n:")) != -1) {
		switch (c) {
		case 't':
			nr = atoi(optarg);
			break;
		case 's':
			short_us = atol(optarg);
			break;
		case 'l':
			long_us = atol(optarg);
			break;
		case 'n':
			secs = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: shortnaps [-t THREADS] [-s SHORT_US] [-l LONG_US] "
					"[-n SECONDS]\n");
			return 2;
		}
	}
	if (nr < 1 || nr > MAX_THREADS || short_us < 1 || long_us < 1) {
		fprintf(stderr, "shortnaps: bad arguments\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	for (int i = 0; i < nr; i++)
		if (pthread_create(&th[i], NULL, alternate, NULL))
			return 1;
	while (atomic_load(&started) < nr)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	if (secs > 0) {
		unsigned long long end = now_ns() + (unsigned long long)(secs * 1e9);

		while (!atomic_load(&stop) && now_ns() < end)
			usleep(10000);
		atomic_store(&stop, 1);
	}
	for (int i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	printf("site short %llu\nsite long %llu\n", (unsigned long long)site_ns[0],
	       (unsigned long long)site_ns[1]);
	return 0;
}
