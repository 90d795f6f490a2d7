// SPDX-License-Identifier: GPL-2.0-only
/*
 * churn: processes and threads that come and go, for wprof's memory and maps
 * under churn. In each of PHASES phases it runs PROCS processes one after
 * the other (fork, exec of itself as a child, wait) and THREADS threads, in
 * batches of 50, interleaved. A child naps 1 us at each of DEPTHS call
 * depths (its addresses, randomized per process, make each of those user
 * stacks new), a thread at 8 of them, and both end. After each phase it
 * appends
 *	phase N procs P threads T
 * to LOG (the totals so far, its own count: ground truth for the test), then
 * sleeps PAUSE_MS so that the reader can look at the profiler meanwhile.
 *
 *	churn -l LOG [-n PHASES] [-p PROCS] [-t THREADS] [-d DEPTHS] [-w PAUSE_MS]
 *	churn -c DEPTHS (the child)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define BATCH 50

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Nap once at each depth from @depth down to 1: one user stack each. */
static __attribute__((noinline)) void nap_down(int depth)
{
	struct timespec ts = { .tv_nsec = 1000 };

	if (depth > 1)
		nap_down(depth - 1);
	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory"); /* not a tail call: a frame per depth */
}

static void *napper(void *arg __attribute__((unused)))
{
	nap_down(8);
	return NULL;
}

/* One process: fork, exec @exe as a child of @depths, wait. 0 or -1. */
static int run_one(const char *exe, const char *depths)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(exe, exe, "-c", depths, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

/* @n threads, BATCH at a time. How many were created. */
static long run_threads(long n)
{
	pthread_t t[BATCH];
	long done = 0;

	while (done < n) {
		int k = 0;

		for (; k < BATCH && done + k < n; k++)
			if (pthread_create(&t[k], NULL, napper, NULL))
				break;
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		if (!k)
			break;
		done += k;
	}
	return done;
}

int main(int argc, char **argv)
{
	const char *log = NULL, *exe = "/proc/self/exe", *depths = "10";
	long phases = 2, procs = 1000, threads = 10000, pause_ms = 1500;
	long nprocs = 0, nthreads = 0;
	int c;

	while ((c = getopt(argc, argv, "c:l:n:p:t:d:w:")) != -1) {
		switch (c) {
		case 'l': log = optarg; break;
		case 'n': phases = atol(optarg); break;
		case 'p': procs = atol(optarg); break;
		case 't': threads = atol(optarg); break;
		case 'd': depths = optarg; break;
		case 'c':
			nap_down(atoi(optarg));
			return 0;
		case 'w': pause_ms = atol(optarg); break;
		default:
			fprintf(stderr, "usage: churn -l LOG [-n PHASES] [-p PROCS] [-t THREADS] "
				"[-d DEPTHS] [-w PAUSE_MS]\n");
			return 2;
		}
	}
	if (!log) {
		fprintf(stderr, "churn: -l LOG is required\n");
		return 2;
	}
	for (long ph = 1; ph <= phases; ph++) {
		FILE *f;

		/* interleaved, so that the profiler sees both kinds all along */
		for (long i = 0; i < procs; i++) {
			if (run_one(exe, depths)) {
				fprintf(stderr, "churn: cannot run %s\n", exe);
				return 1;
			}
			nprocs++;
			if (i % 10 == 0)
				nthreads += run_threads(threads * 10 / procs);
		}
		f = fopen(log, "a");
		if (!f) {
			perror(log);
			return 1;
		}
		fprintf(f, "phase %ld procs %ld threads %ld\n", ph, nprocs, nthreads);
		fclose(f);
		nap_ms(pause_ms);
	}
	return 0;
}
