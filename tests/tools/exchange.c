// SPDX-License-Identifier: GPL-2.0-only
/*
 * exchange A B TARGET SECONDS: keep a symbolic link to TARGET at A or B, and
 * swap the two names (renameat2 RENAME_EXCHANGE) as fast as it can, for
 * SECONDS or until SIGTERM; then print "swaps N relinks N". When the link
 * is gone (a rename over it replaced it), B is made a link again.
 * tests/integration/hostile_output.sh runs it as another user, to swap the
 * file root's wprof is about to write with a symbolic link between any two
 * steps wprof takes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static int is_link(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISLNK(st.st_mode);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	unsigned long long swaps = 0, relinks = 0;
	struct timespec t0, t;
	double secs;

	if (argc != 5 || (secs = atof(argv[4])) <= 0) {
		fprintf(stderr, "usage: exchange A B TARGET SECONDS\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		if (!is_link(argv[1]) && !is_link(argv[2])) {
			unlink(argv[2]);
			if (symlink(argv[3], argv[2])) {
				fprintf(stderr, "symlink %s: %s\n", argv[2], strerror(errno));
				return 1;
			}
			relinks++;
		}
		if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE))
			continue; /* a name is missing for a moment: wprof renamed it */
		/* the clock only now and then: swapping is the work */
		if (++swaps % 1024)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	printf("swaps %llu relinks %llu\n", swaps, relinks);
	return 0;
}
