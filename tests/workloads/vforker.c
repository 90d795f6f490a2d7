// SPDX-License-Identifier: GPL-2.0-only
/*
 * vforker: NR vforks, one after the other. Each child runs on its parent's
 * stack: it naps NAP_MS in child_nap() (called from vfork_once(), in the
 * parent's frames) and exits; the parent, meanwhile, waits in the kernel
 * for it to be done (uninterruptibly, killable), then reaps it. A profiler
 * that left the parent's user stack to be walked as it resumes would walk
 * a stack the child has written over since. Prints "vforked N" (the
 * children that ran: ground truth).
 *
 *	vforker [-n NR] [-m NAP_MS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

__attribute__((noinline)) static void child_nap(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

/* 1 if a child ran and exited 0, 0 if not, -1 if vfork failed */
__attribute__((noinline)) static int vfork_once(long ms)
{
	int status;
	pid_t pid = vfork();

	if (pid < 0)
		return -1;
	if (!pid) {
		child_nap(ms);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	long nr = 50, ms = 10, done = 0;
	int opt, r;

	while ((opt = getopt(argc, argv, "n:m:")) != -1) {
		if (opt == 'n')
			nr = atol(optarg);
		else if (opt == 'm')
			ms = atol(optarg);
		else
			return 2;
	}
	for (long i = 0; i < nr; i++) {
		r = vfork_once(ms);
		if (r < 0) {
			fprintf(stderr, "vforker: vfork %ld: %m\n", i);
			break;
		}
		done += r;
	}
	printf("vforked %ld\n", done);
	return done == nr ? 0 : 1;
}
