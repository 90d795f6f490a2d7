// SPDX-License-Identifier: GPL-2.0-only
/*
 * mutexwait: NR threads ("lock0".."lockNR-1") contending one mutex, each
 * looping { pthread_mutex_lock; burn BURN_MS of CPU; unlock; burn THINK_US }
 * for SECONDS. Only one can hold the lock, so the others wait inside
 * pthread_mutex_lock (a futex sleep): off-CPU time that wprof must put under
 * the lock call. The think time (CPU, not a sleep: the threads must block
 * nowhere else) lets a woken waiter take the lock before the last holder
 * comes back; without it glibc's unfair mutex lets one thread keep it.
 *
 *	mutexwait [-n SECONDS] [-t NR] [-b BURN_MS] [-o THINK_US] [-r REPORT]
 *
 * Each thread measures every call of pthread_mutex_lock three ways: wall
 * time (CLOCK_MONOTONIC), its own CPU time (CLOCK_THREAD_CPUTIME_ID) and its
 * run-queue delay (the second field of /proc/self/task/TID/schedstat). The
 * wall time less the other two is the time the thread was blocked in there.
 *
 * Report: one line per thread:
 *	"NAME TID loops lock_ns lock_cpu_ns lock_rq_ns wall_ns"
 * A thread blocks nowhere but in pthread_mutex_lock (no barrier at the
 * start; the last unlock wakes a waiter but does not wait).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define MAX_THREADS 8

struct locker {
	pthread_t thread;
	char name[16];
	pid_t tid;
	uint64_t loops, lock_ns, lock_cpu_ns, lock_rq_ns, wall_ns;
	int failed;
};

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static double run_s = 3;
static long burn_ms = 5, think_us = 1000;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * schedstat's run_delay: updated when the thread gets a CPU, so a running
 * thread reading its own file sees every wait that has ended. pread at
 * offset 0 makes the seq_file regenerate the text without reopening.
 */
static int rq_delay_ns(int fd, uint64_t *ns)
{
	unsigned long long run, delay;
	char buf[128];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return -1;
	*ns = delay;
	return 0;
}

/* Arithmetic until this thread has used NS of CPU time. */
__attribute__((noinline)) uint64_t burn_cpu(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t acc = 1;

	do {
		for (int i = 0; i < 20000; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return acc;
}

/* A real frame for the caller of pthread_mutex_lock (see the tests). */
__attribute__((noinline)) void take_lock(void)
{
	pthread_mutex_lock(&the_lock);
}

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	uint64_t t0, end, w0, c0, r0, r1;
	char path[64];
	int fd;

	pthread_setname_np(pthread_self(), l->name);
	l->tid = syscall(SYS_gettid);
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", l->tid);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		l->failed = 1;
		return NULL;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	end = t0 + (uint64_t)(run_s * 1e9);
	do {
		if (rq_delay_ns(fd, &r0)) {
			l->failed = 1;
			break;
		}
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		w0 = now_ns(CLOCK_MONOTONIC);
		take_lock();
		l->lock_ns += now_ns(CLOCK_MONOTONIC) - w0;
		l->lock_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (rq_delay_ns(fd, &r1)) {
			pthread_mutex_unlock(&the_lock);
			l->failed = 1;
			break;
		}
		l->lock_rq_ns += r1 - r0;
		burn_cpu(burn_ms * 1000000ULL);
		pthread_mutex_unlock(&the_lock);
		burn_cpu(think_us * 1000ULL);
		l->loops++;
	} while (now_ns(CLOCK_MONOTONIC) < end);
	l->wall_ns = now_ns(CLOCK_MONOTONIC) - t0;
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct locker lockers[MAX_THREADS] = {};
	const char *report = NULL;
	int c, i, nr = 4, failed = 0;
	FILE *f;

	while ((c = getopt(argc, argv, "n:t:b:o:r:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 't':
			nr = atoi(optarg);
			break;
		case 'b':
			burn_ms = atol(optarg);
			break;
		case 'o':
			think_us = atol(optarg);
			break;
		case 'r':
			report = optarg;
			break;
		default:
			nr = 0;
		}
	}
	if (nr < 1 || nr > MAX_THREADS || run_s <= 0 || burn_ms < 0 || think_us < 0 ||
	    optind != argc) {
		fprintf(stderr, "usage: mutexwait [-n SECONDS] [-t NR (1..%d)] [-b BURN_MS] "
				"[-o THINK_US] [-r REPORT]\n", MAX_THREADS);
		return 2;
	}

	for (i = 0; i < nr; i++) {
		int err;

		snprintf(lockers[i].name, sizeof(lockers[i].name), "lock%d", i);
		err = pthread_create(&lockers[i].thread, NULL, locker_main, &lockers[i]);
		if (err) {
			fprintf(stderr, "mutexwait: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < nr; i++) {
		pthread_join(lockers[i].thread, NULL);
		failed |= lockers[i].failed;
	}
	if (failed) {
		fprintf(stderr, "mutexwait: cannot read /proc/self/task/TID/schedstat\n");
		return 1;
	}
	if (!report)
		return 0;
	f = fopen(report, "w");
	if (!f) {
		perror(report);
		return 1;
	}
	for (i = 0; i < nr; i++)
		fprintf(f, "%s %d %llu %llu %llu %llu %llu\n", lockers[i].name, lockers[i].tid,
			(unsigned long long)lockers[i].loops, (unsigned long long)lockers[i].lock_ns,
			(unsigned long long)lockers[i].lock_cpu_ns,
			(unsigned long long)lockers[i].lock_rq_ns,
			(unsigned long long)lockers[i].wall_ns);
	return fclose(f) ? 1 : 0;
}
