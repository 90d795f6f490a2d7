// SPDX-License-Identifier: GPL-2.0-only
/*
 * tidreuse: two processes, one after the other, with one pid (and tid),
 * as after the pids wrapped around. The first burns BURN1_MS of CPU, sleeps
 * SLEEP1_MS and exits; once it is reaped and GAP_MS more have passed, the
 * second is created with the first's pid (clone3() with set_tid: needs
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE) and burns BURN2_MS, sleeps
 * SLEEP2_MS. Both have this program's name. Prints, as ground truth,
 *	child N pid PID burn_ms B sleep_ms S
 * for each, then exits 0, or 1 if the second did not get the pid.
 * With -t, two threads of this process instead, the second given the
 * first's tid by writing /proc/sys/kernel/ns_last_pid before it is made
 * (again, if another task took the tid first; such a thread ends at once),
 * and the lines say "thread N tid TID ...".
 *
 *	tidreuse [-t] [-b BURN1_MS] [-s SLEEP1_MS] [-B BURN2_MS] [-S SLEEP2_MS] [-g GAP_MS]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static volatile unsigned long sink;

/* @ms of this thread's CPU time. */
static __attribute__((noinline)) void reuse_burn(long ms)
{
	long end = cpu_ns() + ms * 1000000L;

	while (cpu_ns() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

static __attribute__((noinline)) void reuse_sleep(long ms)
{
	nap_ms(ms);
}

static __attribute__((noreturn)) void child(long burn_ms, long sleep_ms)
{
	reuse_burn(burn_ms);
	reuse_sleep(sleep_ms);
	_exit(0);
}

/* A child like fork()'s; with the pid @pid if not 0. */
static pid_t spawn(pid_t pid, long burn_ms, long sleep_ms)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	pid_t got;

	if (pid) {
		args.set_tid = (uint64_t)(uintptr_t)&pid;
		args.set_tid_size = 1;
	}
	got = syscall(SYS_clone3, &args, sizeof(args));
	if (got == 0)
		child(burn_ms, sleep_ms);
	return got;
}

struct job {
	long burn_ms, sleep_ms;
	pid_t want, got; /* want: the tid it must have to run, or 0 */
};

static void *thread_main(void *arg)
{
	struct job *j = arg;

	j->got = gettid();
	if (!j->want || j->got == j->want) {
		reuse_burn(j->burn_ms);
		reuse_sleep(j->sleep_ms);
	}
	return NULL;
}

static int run_thread(struct job *j)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, thread_main, j);

	return err ? err : pthread_join(t, NULL);
}

/* Make the next pid (or tid) allocated @pid, if no one else takes it first. */
static int set_next_pid(pid_t pid)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", pid - 1), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

static int threads(long burn1, long sleep1, long burn2, long sleep2, long gap)
{
	struct job first = { burn1, sleep1, 0, 0 }, second = { burn2, sleep2, 0, 0 };

	if (run_thread(&first))
		return 1;
	printf("thread 1 tid %d burn_ms %ld sleep_ms %ld\n", first.got, burn1, sleep1);
	nap_ms(gap);
	second.want = first.got;
	for (int tries = 0; tries < 1000 && second.got != second.want; tries++)
		if (set_next_pid(second.want) || run_thread(&second)) {
			fprintf(stderr, "tidreuse: ns_last_pid: %s\n", strerror(errno));
			return 1;
		}
	if (second.got != second.want) {
		fprintf(stderr, "tidreuse: tid %d was always taken first\n", second.want);
		return 1;
	}
	printf("thread 2 tid %d burn_ms %ld sleep_ms %ld\n", second.got, burn2, sleep2);
	return 0;
}

int main(int argc, char **argv)
{
	long burn1 = 300, sleep1 = 200, burn2 = 100, sleep2 = 600, gap = 0;
	bool as_threads = false;
	pid_t first, second;
	int opt;

	while ((opt = getopt(argc, argv, "tb:s:B:S:g:")) != -1) {
		long v = optarg ? atol(optarg) : 0;

		switch (opt) {
		case 't': as_threads = true; break;
		case 'b': burn1 = v; break;
		case 's': sleep1 = v; break;
		case 'B': burn2 = v; break;
		case 'S': sleep2 = v; break;
		case 'g': gap = v; break;
		default: return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (as_threads)
		return threads(burn1, sleep1, burn2, sleep2, gap);
	first = spawn(0, burn1, sleep1);
	if (first < 0 || waitpid(first, NULL, 0) != first) {
		fprintf(stderr, "tidreuse: first child: %s\n", strerror(errno));
		return 1;
	}
	printf("child 1 pid %d burn_ms %ld sleep_ms %ld\n", first, burn1, sleep1);
	nap_ms(gap);
	second = spawn(first, burn2, sleep2);
	if (second < 0) {
		fprintf(stderr, "tidreuse: clone3 with set_tid %d: %s\n", first, strerror(errno));
		return 1;
	}
	waitpid(second, NULL, 0);
	printf("child 2 pid %d burn_ms %ld sleep_ms %ld\n", second, burn2, sleep2);
	return second == first ? 0 : 1;
}
