// SPDX-License-Identifier: GPL-2.0-only
/*
 * diskio: a thread named "reader" that does O_DIRECT 4 KiB preads at random
 * offsets of a 16 MiB file for SECONDS. O_DIRECT bypasses the page cache, so
 * each read waits for the device in TASK_UNINTERRUPTIBLE: off-CPU time that
 * wprof must tag off-cpu:disk. The thread times its own reads.
 *
 *	diskio [-n SECONDS] [-f FILE] [-r REPORT]
 *
 * FILE (default /var/tmp/wprof-diskio.dat, on a real disk, not tmpfs) is
 * created and removed. Report: tid, reads, read_ns (wall time inside
 * pread), cpu_ns, wall_ns, and from /proc/self/task/TID/schedstat over the
 * same span sched_run_ns (on CPU) and sched_wait_ns (runnable, waiting):
 * wall - run - wait is the time the thread was blocked. Prints "ready TID"
 * once reading.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_DIRECT, pthread_setname_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define FILE_SIZE (16 << 20)
#define BLOCK 4096

static double run_s = 3;
static const char *path = "/var/tmp/wprof-diskio.dat";
static int fd = -1;
static pid_t tid;
static uint64_t reads, read_ns, cpu_ns, wall_ns, run_ns, wait_ns;
static int failed;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void schedstat(uint64_t *run, uint64_t *wait)
{
	unsigned long long r = 0, w = 0;
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/task/%d/schedstat", tid);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &r, &w) != 2)
			r = w = 0;
		fclose(f);
	}
	*run = r;
	*wait = w;
}

__attribute__((noinline)) int read_block(void *buf, off_t off)
{
	return pread(fd, buf, BLOCK, off) == BLOCK ? 0 : -1;
}

static void *reader_main(void *arg)
{
	uint64_t t0, cpu0, end, run0, wait0, run1, wait1;
	unsigned int seed = 42;
	void *buf;

	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	tid = syscall(SYS_gettid);
	if (posix_memalign(&buf, BLOCK, BLOCK)) {
		failed = 1;
		return NULL;
	}
	printf("ready %d\n", tid);
	fflush(stdout);
	schedstat(&run0, &wait0);
	t0 = now_ns(CLOCK_MONOTONIC);
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	end = t0 + (uint64_t)(run_s * 1e9);
	while (now_ns(CLOCK_MONOTONIC) < end) {
		off_t off = (off_t)(rand_r(&seed) % (FILE_SIZE / BLOCK)) * BLOCK;
		uint64_t r0 = now_ns(CLOCK_MONOTONIC);

		if (read_block(buf, off)) {
			perror("diskio: pread");
			failed = 1;
			break;
		}
		read_ns += now_ns(CLOCK_MONOTONIC) - r0;
		reads++;
	}
	cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	wall_ns = now_ns(CLOCK_MONOTONIC) - t0;
	schedstat(&run1, &wait1);
	run_ns = run1 - run0;
	wait_ns = wait1 - wait0;
	free(buf);
	return NULL;
}

/* Write the file through the page cache, then flush and drop it from the cache. */
static int make_file(void)
{
	static char chunk[1 << 20];
	int wfd, i;

	memset(chunk, 0x5a, sizeof(chunk));
	wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (wfd < 0)
		return -1;
	for (i = 0; i < FILE_SIZE / (int)sizeof(chunk); i++) {
		if (write(wfd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) {
			close(wfd);
			return -1;
		}
	}
	if (fsync(wfd) || close(wfd))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *report = NULL;
	pthread_t thread;
	int c, err;
	FILE *f;

	while ((c = getopt(argc, argv, "n:f:r:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 'f':
			path = optarg;
			break;
		case 'r':
			report = optarg;
			break;
		default:
			fprintf(stderr, "usage: diskio [-n SECONDS] [-f FILE] [-r REPORT]\n");
			return 2;
		}
	}
	if (make_file()) {
		fprintf(stderr, "diskio: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "diskio: O_DIRECT open of %s: %s\n", path, strerror(errno));
		unlink(path);
		return 1;
	}
	err = pthread_create(&thread, NULL, reader_main, NULL);
	if (err) {
		fprintf(stderr, "diskio: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(thread, NULL);
	close(fd);
	unlink(path);
	if (failed)
		return 1;
	if (!report)
		return 0;
	f = fopen(report, "w");
	if (!f) {
		perror(report);
		return 1;
	}
	fprintf(f, "tid %d\nreads %llu\nread_ns %llu\ncpu_ns %llu\nwall_ns %llu\n"
		   "sched_run_ns %llu\nsched_wait_ns %llu\n",
		tid, (unsigned long long)reads, (unsigned long long)read_ns,
		(unsigned long long)cpu_ns, (unsigned long long)wall_ns,
		(unsigned long long)run_ns, (unsigned long long)wait_ns);
	return fclose(f) ? 1 : 0;
}
