// SPDX-License-Identifier: GPL-2.0-only
/*
 * condwait: four threads that sleep in the same libc function under two
 * different callers, for a ground truth of whose callers a stack shows.
 *
 *	condwait [-n SECONDS]
 *
 * Each thread runs worker_loop(), which calls wait_for_job() (threads
 * "job0", "job1") or wait_for_flush() ("flush0", "flush1"); both wait in
 * pthread_cond_timedwait() on a condition variable nobody signals, with a
 * timeout of SECONDS (default 60), so every thread stays blocked in that one
 * call, under its own caller, until the program exits. The main thread
 * waits in pthread_join().
 *
 * Prints one line per thread, "job TID" or "flush TID", then "ready PID"
 * once every thread has reached its wait (it announces itself under the
 * mutex that the wait releases, so when main holds that mutex again after
 * the last announcement, all four sleep in pthread_cond_timedwait).
 *
 * Built twice: with frame pointers (the workloads' rule) and as
 * condwait-nofp, -O2 -fomit-frame-pointer (tests/realstacks.mk). The
 * functions are noinline and use the call's result, so that neither build
 * inlines them or turns the wait into a tail call: the real call chain is
 * worker_loop -> wait_for_* -> pthread_cond_timedwait in both.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NR_WORKERS 4

enum role { ROLE_JOB, ROLE_FLUSH };

struct worker {
	pthread_t thread;
	enum role role;
	int index;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER; /* never signalled */
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static int nr_arrived;
static long run_s = 60;

/* Tell main that this thread is about to wait; called with `lock` held. */
static void announce(const struct worker *w)
{
	printf("%s %ld\n", w->role == ROLE_JOB ? "job" : "flush", (long)syscall(SYS_gettid));
	fflush(stdout);
	nr_arrived++;
	pthread_cond_signal(&arrived);
}

static void deadline_of(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += run_s;
}

/* Returns how many waits ended without a timeout (none: `never` is never signalled). */
__attribute__((noinline)) int wait_for_job(const struct worker *w)
{
	struct timespec ts;
	int err;

	deadline_of(&ts);
	pthread_mutex_lock(&lock);
	announce(w);
	err = pthread_cond_timedwait(&never, &lock, &ts);
	pthread_mutex_unlock(&lock);
	return err != ETIMEDOUT;
}

/*
 * The twin of wait_for_job(), on purpose: the test is two different direct
 * callers of pthread_cond_timedwait() (code without frame pointers) under
 * one grandparent, and no helper between them and libc.
 */
__attribute__((noinline)) int wait_for_flush(const struct worker *w)
{
	struct timespec ts;
	int err;

	deadline_of(&ts);
	pthread_mutex_lock(&lock);
	announce(w);
	err = pthread_cond_timedwait(&never, &lock, &ts);
	pthread_mutex_unlock(&lock);
	return err != ETIMEDOUT;
}

__attribute__((noinline)) void *worker_loop(void *arg)
{
	struct worker *w = arg;
	int spurious;

	/* one wait: it times out when the program is due to exit */
	if (w->role == ROLE_JOB)
		spurious = wait_for_job(w);
	else
		spurious = wait_for_flush(w);
	return spurious ? arg : NULL;
}

int main(int argc, char **argv)
{
	struct worker workers[NR_WORKERS];
	char name[16];
	int opt, i;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: condwait [-n SECONDS]\n");
			return 2;
		}
		run_s = atol(optarg);
	}
	for (i = 0; i < NR_WORKERS; i++) {
		workers[i].role = i % 2 ? ROLE_FLUSH : ROLE_JOB;
		workers[i].index = i / 2;
		if (pthread_create(&workers[i].thread, NULL, worker_loop, &workers[i])) {
			perror("condwait: pthread_create");
			return 1;
		}
		snprintf(name, sizeof(name), "%s%d", workers[i].role == ROLE_JOB ? "job" : "flush",
			 workers[i].index);
		pthread_setname_np(workers[i].thread, name);
	}
	pthread_mutex_lock(&lock);
	while (nr_arrived < NR_WORKERS)
		pthread_cond_wait(&arrived, &lock);
	pthread_mutex_unlock(&lock);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i].thread, NULL);
	return 0;
}
