// SPDX-License-Identifier: GPL-2.0-only
/*
 * diskwrite: a thread named "writer" that does synchronous writes of SIZE
 * bytes (default 4 KiB) for SECONDS, each one waiting for the device:
 *	default: pwrite() into the page cache, then fsync(), which writes the
 *		 page back and commits the journal (mtime changed), waiting
 *		 in TASK_UNINTERRUPTIBLE for both;
 *	-D:	 pwrite() on an O_DIRECT | O_DSYNC descriptor (no page cache;
 *		 the write returns once the device has the data).
 * The waits are off-CPU time that wprof must tag off-cpu:disk. The thread
 * times its own writes.
 *
 *	diskwrite [-n SECONDS] [-D] [-s SIZE_KIB] [-f FILE] [-r REPORT]
 *
 * FILE (default /var/tmp/wprof-diskwrite.dat, on a real disk, not tmpfs)
 * of 8 x SIZE is created, preallocated (so no write allocates blocks) and
 * removed; the writes go round it.
 * Report (key value per line): tid, writes, write_ns (wall time inside
 * pwrite), sync_ns (wall time inside fsync), io_cpu_ns (the thread's CPU
 * time inside both), cpu_ns, wall_ns, and from
 * /proc/self/task/TID/schedstat over the same span sched_run_ns (on CPU)
 * and sched_wait_ns (runnable, waiting). Prints "ready TID" once writing.
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

#define BLOCK 4096
#define NR_SLOTS 8
#define MAX_SIZE (64 << 20)

static double run_s = 3;
static const char *path = "/var/tmp/wprof-diskwrite.dat";
static int direct;
static size_t size = BLOCK;
static int fd = -1;
static pid_t tid;
static uint64_t writes, write_ns, sync_ns, io_cpu_ns, cpu_ns, wall_ns, run_ns, wait_ns;
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

__attribute__((noinline)) int write_block(const void *buf, off_t off)
{
	return pwrite(fd, buf, size, off) == (ssize_t)size ? 0 : -1;
}

__attribute__((noinline)) int sync_file(void)
{
	return fsync(fd);
}

static void *writer_main(void *arg)
{
	uint64_t t0, cpu0, end, run0, wait0, run1, wait1;
	void *buf;

	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	tid = syscall(SYS_gettid);
	if (posix_memalign(&buf, BLOCK, size)) {
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
		off_t off = (off_t)(writes % NR_SLOTS) * size;
		uint64_t w0, w1, c0;

		/* New bytes every time: nothing may skip the write as a no-op. */
		memset(buf, (int)writes, size);
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		w0 = now_ns(CLOCK_MONOTONIC);
		if (write_block(buf, off)) {
			perror("diskwrite: pwrite");
			failed = 1;
			break;
		}
		w1 = now_ns(CLOCK_MONOTONIC);
		write_ns += w1 - w0;
		if (!direct) {
			if (sync_file()) {
				perror("diskwrite: fsync");
				failed = 1;
				break;
			}
			sync_ns += now_ns(CLOCK_MONOTONIC) - w1;
		}
		io_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		writes++;
	}
	cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	wall_ns = now_ns(CLOCK_MONOTONIC) - t0;
	schedstat(&run1, &wait1);
	run_ns = run1 - run0;
	wait_ns = wait1 - wait0;
	free(buf);
	return NULL;
}

/* Allocate and write every block once, so the timed writes only overwrite. */
static int make_file(void)
{
	char *chunk = malloc(size);
	int wfd, i;

	if (!chunk)
		return -1;
	memset(chunk, 0x5a, size);
	wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (wfd < 0) {
		free(chunk);
		return -1;
	}
	for (i = 0; i < NR_SLOTS; i++) {
		if (write(wfd, chunk, size) != (ssize_t)size) {
			free(chunk);
			close(wfd);
			return -1;
		}
	}
	free(chunk);
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

	while ((c = getopt(argc, argv, "n:Ds:f:r:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 'D':
			direct = 1;
			break;
		case 's':
			size = (size_t)atol(optarg) * 1024;
			break;
		case 'f':
			path = optarg;
			break;
		case 'r':
			report = optarg;
			break;
		default:
			size = 0;
		}
	}
	if (!size || size % BLOCK || size > MAX_SIZE || optind != argc) {
		fprintf(stderr, "usage: diskwrite [-n SECONDS] [-D] [-s SIZE_KIB (4..65536, 4 KiB "
				"multiple)] [-f FILE] [-r REPORT]\n");
		return 2;
	}
	if (make_file()) {
		fprintf(stderr, "diskwrite: %s: %s\n", path, strerror(errno));
		unlink(path);
		return 1;
	}
	fd = open(path, direct ? O_WRONLY | O_DIRECT | O_DSYNC : O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "diskwrite: open of %s%s: %s\n", path,
			direct ? " with O_DIRECT" : "", strerror(errno));
		unlink(path);
		return 1;
	}
	err = pthread_create(&thread, NULL, writer_main, NULL);
	if (err) {
		fprintf(stderr, "diskwrite: pthread_create: %s\n", strerror(err));
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
	fprintf(f, "tid %d\nwrites %llu\nwrite_ns %llu\nsync_ns %llu\nio_cpu_ns %llu\ncpu_ns %llu\n"
		   "wall_ns %llu\nsched_run_ns %llu\nsched_wait_ns %llu\n",
		tid, (unsigned long long)writes, (unsigned long long)write_ns,
		(unsigned long long)sync_ns, (unsigned long long)io_cpu_ns, (unsigned long long)cpu_ns,
		(unsigned long long)wall_ns, (unsigned long long)run_ns,
		(unsigned long long)wait_ns);
	return fclose(f) ? 1 : 0;
}
