// SPDX-License-Identifier: GPL-2.0-only
/*
 * forkwide: NR child processes alive at once, for the maps that hold one
 * entry per process (wprof's `targets`: 4096). Forks them one after the
 * other, each blocked reading a pipe; prints "forked N" (the count that
 * succeeded: ground truth for the test), holds them HOLD_MS, then closes
 * the pipe, which ends them all, and reaps them.
 *
 *	forkwide [-n NR] [-w HOLD_MS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	long nr = 100, hold_ms = 200, forked = 0;
	struct timespec ts;
	int fds[2], opt;
	char c;

	while ((opt = getopt(argc, argv, "n:w:")) != -1) {
		if (opt == 'n')
			nr = atol(optarg);
		else if (opt == 'w')
			hold_ms = atol(optarg);
		else
			return 2;
	}
	if (pipe(fds))
		return 1;
	for (long i = 0; i < nr; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "forkwide: fork %ld: %m\n", i);
			break;
		}
		if (!pid) {
			close(fds[1]);
			while (read(fds[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		forked++;
	}
	printf("forked %ld\n", forked);
	fflush(stdout);
	ts = (struct timespec){ .tv_sec = hold_ms / 1000, .tv_nsec = hold_ms % 1000 * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	close(fds[1]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return forked == nr ? 0 : 1;
}
