// SPDX-License-Identifier: GPL-2.0-only
/*
 * stalls: a thread named "staller" that runs ROUNDS rounds of { burn CPU in
 * burn_cpu(); block in stall_here() }, with the lengths of both varying
 * from round to round: 150-900 ms of CPU, then a stall of 200-700 ms, each
 * round's stall of a length no other round has. The thread times each
 * stall itself and logs it, as the ground truth of a test of the off-CPU
 * intervals a profiler keeps one by one.
 *
 *	stalls [-n ROUNDS] [-l LOGFILE]
 *
 * Log (one line each, flushed as written):
 *	worker TID
 *	stall START_UNIX_NS LENGTH_NS	(one per round)
 * START_UNIX_NS is CLOCK_REALTIME read just before the stall; LENGTH_NS is
 * CLOCK_MONOTONIC from just before it to just after, so it holds the wait
 * for a CPU after the wakeup as well.
 *
 * Prints "ready" on stdout as the worker starts; the main thread only joins.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long rounds = 6;
static FILE *log_file;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Round i's lengths. 211 and 501 are coprime, so the stalls of rounds 0-500
 * all differ (200, 411, 622, 332, 543, 253, 464, ... ms): a block matched to
 * the wrong round is off by at least 1 ms, and by 40+ ms in the first
 * rounds.
 */
static long stall_ms_of(long i)
{
	return 200 + i * 211 % 501;
}

static long burn_ms_of(long i)
{
	return 150 + (i * 337 + 101) % 751;
}

/* Arithmetic, with the clock read every ~100 us: samples land here. */
__attribute__((noinline)) uint64_t burn_cpu(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t acc = 1;

	for (;;) {
		for (int i = 0; i < 100000; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		if (now_ns(CLOCK_THREAD_CPUTIME_ID) >= end)
			break;
	}
	return acc;
}

/*
 * libc's nanosleep keeps the caller's frame pointer but is not a frame of
 * its own, so a frame-pointer walk from inside it skips its direct caller:
 * block_for() takes that hit and stall_here() stays visible. A signal
 * (EINTR) does not cut the stall short.
 */
__attribute__((noinline)) int block_for(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };
	int err;

	while ((err = nanosleep(&ts, &ts)) && errno == EINTR)
		;
	asm volatile("" ::: "memory");
	return err;
}

/* Blocks MS ms; START_UNIX_NS and the length as the thread saw them. */
__attribute__((noinline)) uint64_t stall_here(long ms, uint64_t *start_unix_ns)
{
	uint64_t t0, t1;

	*start_unix_ns = now_ns(CLOCK_REALTIME);
	t0 = now_ns(CLOCK_MONOTONIC);
	block_for(ms * 1000000ULL);
	t1 = now_ns(CLOCK_MONOTONIC);
	/* nothing may fold this function into its caller or block_for */
	asm volatile("" ::: "memory");
	return t1 - t0;
}

__attribute__((noinline)) void *staller_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "staller");
	if (log_file) {
		fprintf(log_file, "worker %ld\n", (long)syscall(SYS_gettid));
		fflush(log_file);
	}
	printf("ready\n");
	fflush(stdout);

	for (long i = 0; i < rounds; i++) {
		uint64_t start_unix_ns, len_ns;

		burn_cpu(burn_ms_of(i) * 1000000ULL);
		len_ns = stall_here(stall_ms_of(i), &start_unix_ns);
		if (log_file) {
			fprintf(log_file, "stall %llu %llu\n", (unsigned long long)start_unix_ns,
				(unsigned long long)len_ns);
			fflush(log_file);
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: stalls [-n ROUNDS] [-l LOGFILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	pthread_t thread;
	int c, err;

	while ((c = getopt(argc, argv, "n:l:")) != -1) {
		switch (c) {
		case 'n':
			rounds = atol(optarg);
			break;
		case 'l':
			path = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || rounds < 0 || rounds > 500)
		usage();
	if (path) {
		log_file = fopen(path, "w");
		if (!log_file) {
			fprintf(stderr, "stalls: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}

	err = pthread_create(&thread, NULL, staller_main, NULL);
	if (err) {
		fprintf(stderr, "stalls: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(thread, NULL);
	if (log_file && fclose(log_file)) {
		fprintf(stderr, "stalls: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}
