// SPDX-License-Identifier: GPL-2.0-only
/*
 * sleepburn: a thread named "burner" that loops { burn BURN_MS of CPU in
 * burn_cpu(); sleep SLEEP_MS in sleep_phase() } and knows its own ground
 * truth: at exit it writes its on-CPU and wall time, measured by itself and
 * by the kernel's schedstat, so tests can compare wprof's numbers with them.
 *
 *	sleepburn [-n SECONDS] [-b BURN_MS] [-s SLEEP_MS] [-r REPORT] [-N NAME] [-q]
 *
 * -n: total run time (decimal allowed; default: until SIGTERM/SIGINT).
 * -N: the worker's thread name instead of "burner" (unique names tell
 *     instances apart in a system-wide recording).
 * -q: do not print "ready TID" (for `wprof record -- sleepburn` to stdout).
 * Prints "ready TID" on stdout once the burner runs.
 *
 * Report (key value per line): tid, cpu_ns, wall_ns, schedstat_run_ns,
 * schedstat_wait_ns, loops, burn_ms, sleep_ms.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np, CPU_SET */
#endif
#include <errno.h>
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

struct opts {
	double run_s; /* <= 0: until a signal */
	long burn_ms;
	long sleep_ms;
	const char *report;
	const char *name;
	int quiet;
};

struct result {
	pid_t tid;
	uint64_t cpu_ns;
	uint64_t wall_ns;
	uint64_t sched_run_ns;
	uint64_t sched_wait_ns;
	uint64_t loops;
};

static struct opts opts = { .burn_ms = 30, .sleep_ms = 170, .name = "burner" };
static struct result result;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Pure arithmetic; the clock is read only every 100k iterations (~100 us),
 * so nearly every on-CPU sample lands in this function itself and not in
 * clock_gettime/vDSO. -fno-inline keeps it a real frame.
 */
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

/* A signal ends the sleep early: no need to finish a 170 ms nap to exit. */
__attribute__((noinline)) void sleep_phase(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

/* /proc/self/task/TID/schedstat: on-CPU ns, runqueue wait ns, timeslices. */
static void read_schedstat(pid_t tid, uint64_t *run_ns, uint64_t *wait_ns)
{
	char path[64];
	unsigned long long run = 0, wait = 0;
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

__attribute__((noinline)) void *burner_main(void *arg)
{
	uint64_t start_ns, deadline_ns = UINT64_MAX, cpu0_ns;

	(void)arg;
	pthread_setname_np(pthread_self(), opts.name);
	result.tid = syscall(SYS_gettid);
	start_ns = now_ns(CLOCK_MONOTONIC);
	cpu0_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (opts.run_s > 0)
		deadline_ns = start_ns + (uint64_t)(opts.run_s * 1e9);
	if (!opts.quiet) {
		printf("ready %d\n", result.tid);
		fflush(stdout);
	}

	while (!stop) {
		uint64_t now, sleep_ns = opts.sleep_ms * 1000000ULL;

		burn_cpu(opts.burn_ms * 1000000ULL);
		result.loops++;
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= deadline_ns || stop)
			break;
		/* Trim the last sleep so that -n is the run time, not a lower bound. */
		if (deadline_ns - now < sleep_ns)
			sleep_ns = deadline_ns - now;
		sleep_phase(sleep_ns);
		if (now_ns(CLOCK_MONOTONIC) >= deadline_ns)
			break;
	}

	result.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0_ns;
	result.wall_ns = now_ns(CLOCK_MONOTONIC) - start_ns;
	/* Since thread creation: includes the few us before start_ns. */
	read_schedstat(result.tid, &result.sched_run_ns, &result.sched_wait_ns);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_report(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "sleepburn: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "tid %d\ncpu_ns %llu\nwall_ns %llu\nschedstat_run_ns %llu\n"
		   "schedstat_wait_ns %llu\nloops %llu\nburn_ms %ld\nsleep_ms %ld\n",
		result.tid, (unsigned long long)result.cpu_ns, (unsigned long long)result.wall_ns,
		(unsigned long long)result.sched_run_ns, (unsigned long long)result.sched_wait_ns,
		(unsigned long long)result.loops, opts.burn_ms, opts.sleep_ms);
	if (fclose(f)) {
		fprintf(stderr, "sleepburn: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sleepburn [-n SECONDS] [-b BURN_MS] [-s SLEEP_MS] [-r REPORT] [-N NAME] [-q]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t thread;
	int c, err;

	while ((c = getopt(argc, argv, "n:b:s:r:N:q")) != -1) {
		switch (c) {
		case 'n':
			opts.run_s = atof(optarg);
			break;
		case 'b':
			opts.burn_ms = atol(optarg);
			break;
		case 's':
			opts.sleep_ms = atol(optarg);
			break;
		case 'r':
			opts.report = optarg;
			break;
		case 'N':
			opts.name = optarg;
			break;
		case 'q':
			opts.quiet = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || opts.burn_ms < 0 || opts.sleep_ms < 0 || strlen(opts.name) > 15)
		usage();

	/* No SA_RESTART: the sleeping burner should wake up and see the flag. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	err = pthread_create(&thread, NULL, burner_main, NULL);
	if (err) {
		fprintf(stderr, "sleepburn: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(thread, NULL);
	return opts.report ? write_report(opts.report) : 0;
}
