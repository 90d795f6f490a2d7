// SPDX-License-Identifier: GPL-2.0-only
/*
 * forkshort: NR children, one after the other, each gone a moment after its
 * fork: it naps NAP_US in short_nap() (called from short_child()) and
 * exits, without an exec; the parent waits for it before the next. A
 * profiler that reads a new process's maps when told of its fork mostly
 * finds it gone: its frames are its parent's code, at its parent's
 * addresses. Prints "forked N" (the children that ran: ground truth).
 * With -w, it first waits WAIT_MS, for a profiler told of its exec to have
 * read its own maps before the first fork.
 *
 *	forkshort [-n NR] [-u NAP_US] [-w WAIT_MS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

__attribute__((noinline)) static void short_nap(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

/* the wait before the first fork (-w), in a frame of its own */
__attribute__((noinline)) static void settle(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void short_child(long us)
{
	short_nap(us);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long nr = 200, us = 50, wait_ms = 0, forked = 0;
	int opt, status;

	while ((opt = getopt(argc, argv, "n:u:w:")) != -1) {
		if (opt == 'n')
			nr = atol(optarg);
		else if (opt == 'u')
			us = atol(optarg);
		else if (opt == 'w')
			wait_ms = atol(optarg);
		else
			return 2;
	}
	if (wait_ms > 0)
		settle(wait_ms);
	for (long i = 0; i < nr; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "forkshort: fork %ld: %m\n", i);
			break;
		}
		if (!pid) {
			short_child(us);
			_exit(0);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		forked += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	printf("forked %ld\n", forked);
	return forked == nr ? 0 : 1;
}
