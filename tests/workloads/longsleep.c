// SPDX-License-Identifier: GPL-2.0-only
/*
 * longsleep: a thread named "napper" that sleeps SECONDS in one nanosleep()
 * call, in long_nap(), called from napper_main(). A recording started and
 * ended while it sleeps must count the window, not the whole sleep, under
 * the stack it blocked with before the recording began.
 *
 *	longsleep [-s SECONDS]
 *
 * Prints "ready TID" just before the sleep (the main thread then waits in
 * pthread_join) and exits when the sleep is over, or at once on SIGTERM.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double sleep_s = 10;

/*
 * libc's nanosleep keeps the caller's frame pointer but is not a frame of
 * its own, so a frame-pointer walk from inside it skips its direct caller:
 * do_sleep() takes that hit and long_nap() stays visible.
 */
__attribute__((noinline)) int do_sleep(const struct timespec *ts)
{
	return nanosleep(ts, NULL);
}

__attribute__((noinline)) void long_nap(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	do_sleep(&ts);
}

__attribute__((noinline)) void *napper_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "napper");
	printf("ready %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	long_nap(sleep_s);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	int c, err;

	while ((c = getopt(argc, argv, "s:")) != -1) {
		switch (c) {
		case 's':
			sleep_s = atof(optarg);
			break;
		default:
			sleep_s = -1;
		}
	}
	if (sleep_s <= 0 || optind != argc) {
		fprintf(stderr, "usage: longsleep [-s SECONDS]\n");
		return 2;
	}
	err = pthread_create(&thread, NULL, napper_main, NULL);
	if (err) {
		fprintf(stderr, "longsleep: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(thread, NULL);
	return 0;
}
