// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_libc: callers of libc code built without frame pointers, for the
 * CFI recovery of user stacks.
 *
 *	sym_libc [-n SECONDS] [-c] [-s] [-S NAP_US]
 *
 * -c: a thread named "clocker" calls clock_gettime(CLOCK_MONOTONIC) in a
 *     tight loop in spin_clock() for SECONDS: nearly all of its on-CPU time
 *     is in libc's clock_gettime() and the vDSO.
 * -s: a thread named "napper" calls nanosleep(NAP_US, default 5000 us) in a
 *     loop in nap_here() for SECONDS: all of its off-CPU time is in there.
 * Both (the default when neither is given) run at once. Each thread prints
 * "ready NAME TID" once started; the process exits when both are done, or
 * at once on SIGTERM/SIGINT.
 *
 * libc's clock_gettime() and nanosleep() keep the caller's frame pointer in
 * %rbp but push no frame of their own: a frame-pointer walk that starts in
 * them (or in the vDSO below clock_gettime) goes from %rbp straight to the
 * return address of spin_clock()/nap_here() into *their* caller, and so
 * never names them. Only the code's CFI (.eh_frame) finds them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
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
static double run_s = 3;
static long nap_us = 5000;
static uint64_t deadline_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void say_ready(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	printf("ready %s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
}

/* Nothing but clock reads: the sample lands in libc or the vDSO. */
__attribute__((noinline)) uint64_t spin_clock(uint64_t end_ns)
{
	struct timespec ts;
	uint64_t reads = 0;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		reads++;
	} while (!stop && (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec < end_ns);
	return reads;
}

__attribute__((noinline)) void nap_here(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

static void *clocker_main(void *arg)
{
	(void)arg;
	say_ready("clocker");
	spin_clock(deadline_ns);
	return NULL;
}

static void *napper_main(void *arg)
{
	(void)arg;
	say_ready("napper");
	while (!stop && now_ns() < deadline_ns)
		nap_here(nap_us);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	void *(*mains[2])(void *);
	pthread_t threads[2];
	int c, n = 0, i, err;
	int clocker = 0, napper = 0;

	while ((c = getopt(argc, argv, "n:csS:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 'c':
			clocker = 1;
			break;
		case 's':
			napper = 1;
			break;
		case 'S':
			nap_us = atol(optarg);
			break;
		default:
			run_s = -1;
		}
	}
	if (run_s <= 0 || nap_us <= 0 || optind != argc) {
		fprintf(stderr, "usage: sym_libc [-n SECONDS] [-c] [-s] [-S NAP_US]\n");
		return 2;
	}
	if (!clocker && !napper)
		clocker = napper = 1;
	if (clocker)
		mains[n++] = clocker_main;
	if (napper)
		mains[n++] = napper_main;

	/* No SA_RESTART: a napping thread should wake up and see the flag. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	deadline_ns = now_ns() + (uint64_t)(run_s * 1e9);
	for (i = 0; i < n; i++) {
		err = pthread_create(&threads[i], NULL, mains[i], NULL);
		if (err) {
			fprintf(stderr, "sym_libc: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
