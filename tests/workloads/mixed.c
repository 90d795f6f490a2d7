// SPDX-License-Identifier: GPL-2.0-only
/*
 * mixed: one process whose threads each spend wall-clock time differently,
 * for the per-thread accounting, the filters and --wakers:
 *	"burn"    on CPU all the time, in burn_loop()
 *	"nap"     nanosleep(NAP_MS) in a loop, in nap_loop()
 *	"mix"     2 ms of CPU then 3 ms of nanosleep, in mix_loop()
 *	"piperd"  blocked in read() on a pipe, in reader_loop()
 *	"pipewr"  every 20 ms writes one byte to that pipe from wake_reader(),
 *	          called from writer_loop(): it is the one that wakes piperd
 *	"syncer"  (with -f) pwrite + fsync of FILE every 50 ms, in sync_loop()
 *	"idle"    blocked in read() on a pipe nobody writes, in idle_wait():
 *	          off-CPU for any recording window
 * and the main thread ("mixed") waits in sigsuspend() until SIGTERM/SIGINT
 * or -n SECONDS, so it is idle too.
 *
 *	mixed [-n SECONDS] [-f FILE] [-N COMM]
 *
 * -N renames the process (the main thread) from "mixed" to COMM, for
 * recordings of two instances. Prints "NAME TID" per thread, then "ready";
 * then "nap_max_us N" for each nap longer than any before it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define NAP_MS 10
#define MAX_WORKERS 8

struct worker {
	const char *name;
	void *(*loop)(void *arg);
	pid_t tid;
};

static volatile sig_atomic_t stop;
static int wake_pipe[2], idle_pipe[2];
static int sync_fd = -1;
static pthread_barrier_t started;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

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

__attribute__((noinline)) void *burn_loop(void *arg)
{
	(void)arg;
	while (!stop)
		burn_cpu(10000000);
	return NULL;
}

/* Each longer nap than any before, as timed around it, is printed: "nap_max_us N". */
__attribute__((noinline)) void *nap_loop(void *arg)
{
	uint64_t max_ns = 0, t0, d;

	(void)arg;
	while (!stop) {
		t0 = now_ns(CLOCK_MONOTONIC);
		sleep_ms(NAP_MS);
		d = now_ns(CLOCK_MONOTONIC) - t0;
		if (d > max_ns) {
			max_ns = d;
			printf("nap_max_us %llu\n", (unsigned long long)((d + 999) / 1000));
			fflush(stdout);
		}
	}
	return NULL;
}

__attribute__((noinline)) void *mix_loop(void *arg)
{
	(void)arg;
	while (!stop) {
		burn_cpu(2000000);
		sleep_ms(3);
	}
	return NULL;
}

__attribute__((noinline)) void *reader_loop(void *arg)
{
	char c;

	(void)arg;
	while (!stop && read(wake_pipe[0], &c, 1) == 1)
		;
	return NULL;
}

/*
 * write() is a libc wrapper without a frame of its own, so a frame-pointer
 * walk from inside it skips its caller: poke_pipe() takes that hit, and
 * wake_reader(), the function the tests look for in the waker's stack,
 * stays visible.
 */
__attribute__((noinline)) int poke_pipe(void)
{
	return write(wake_pipe[1], "x", 1) == 1 ? 0 : -1;
}

__attribute__((noinline)) int wake_reader(void)
{
	return poke_pipe();
}

__attribute__((noinline)) void *writer_loop(void *arg)
{
	(void)arg;
	while (!stop) {
		sleep_ms(20);
		if (wake_reader())
			break;
	}
	return NULL;
}

__attribute__((noinline)) void *sync_loop(void *arg)
{
	char buf[4096];
	unsigned int n = 0;

	(void)arg;
	while (!stop) {
		memset(buf, (int)n++, sizeof(buf));
		if (pwrite(sync_fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || fsync(sync_fd))
			break;
		sleep_ms(50);
	}
	return NULL;
}

__attribute__((noinline)) void *idle_wait(void *arg)
{
	char c;

	(void)arg;
	/* Returns only when main closes the write end, i.e. never before exit. */
	while (read(idle_pipe[0], &c, 1) > 0)
		;
	return NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	w->tid = syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	return w->loop(NULL);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct worker workers[MAX_WORKERS] = {
		{ .name = "burn", .loop = burn_loop },	   { .name = "nap", .loop = nap_loop },
		{ .name = "mix", .loop = mix_loop },	   { .name = "piperd", .loop = reader_loop },
		{ .name = "pipewr", .loop = writer_loop }, { .name = "idle", .loop = idle_wait },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	const char *path = NULL, *comm = NULL;
	int c, i, nr = 6;
	double run_s = 0;
	sigset_t mask, old;

	while ((c = getopt(argc, argv, "n:f:N:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 'f':
			path = optarg;
			break;
		case 'N':
			comm = optarg;
			break;
		default:
			fprintf(stderr, "usage: mixed [-n SECONDS] [-f FILE] [-N COMM]\n");
			return 2;
		}
	}
	if (comm && prctl(PR_SET_NAME, comm, 0, 0, 0)) {
		perror("mixed: PR_SET_NAME");
		return 1;
	}
	if (path) {
		sync_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (sync_fd < 0) {
			fprintf(stderr, "mixed: %s: %s\n", path, strerror(errno));
			return 1;
		}
		workers[nr++] = (struct worker){ .name = "syncer", .loop = sync_loop };
	}
	if (pipe(wake_pipe) || pipe(idle_pipe)) {
		perror("mixed: pipe");
		return 1;
	}

	/* Only the main thread takes the signal, in sigsuspend() below. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	pthread_barrier_init(&started, NULL, nr + 1);
	for (i = 0; i < nr; i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, worker_main, &workers[i]);

		if (err) {
			fprintf(stderr, "mixed: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&started);
	for (i = 0; i < nr; i++)
		printf("%s %d\n", workers[i].name, workers[i].tid);
	printf("ready\n");
	fflush(stdout);

	if (run_s > 0) {
		struct timespec ts = { .tv_sec = (time_t)run_s,
				       .tv_nsec = (long)((run_s - (time_t)run_s) * 1e9) };
		timer_t timer;
		struct itimerspec its = { .it_value = ts };

		if (timer_create(CLOCK_MONOTONIC, NULL, &timer) || timer_settime(timer, 0, &its, NULL)) {
			perror("mixed: timer");
			return 1;
		}
	}
	while (!stop)
		sigsuspend(&old);
	if (sync_fd >= 0) {
		close(sync_fd);
		unlink(path);
	}
	/* Returning from main ends every thread, idle included. */
	return 0;
}
