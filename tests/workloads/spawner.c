// SPDX-License-Identifier: GPL-2.0-only
/*
 * spawner: NR children started with posix_spawn(), one after the other, each
 * running PROG (default /bin/true) and reaped before the next. glibc starts
 * each with clone3 (CLONE_VM | CLONE_VFORK) on a stack of its own: the parent
 * waits in that syscall until the child has exec'd, its user registers just
 * after the syscall instruction of glibc's clone3 wrapper, in code its CFI
 * does not cover. Prints "spawned N" (the children that ran and exited 0:
 * ground truth).
 *
 *	spawner [-n NR] [-p PROG]
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

extern char **environ;

/* 1 if a child ran PROG and exited 0, else 0 */
__attribute__((noinline)) static int spawn_once(const char *prog)
{
	char *argv[] = { (char *)prog, NULL };
	pid_t pid;
	int status;

	if (posix_spawn(&pid, prog, NULL, NULL, argv, environ))
		return 0;
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	const char *prog = "/bin/true";
	long n = 100, ok = 0;
	int c;

	while ((c = getopt(argc, argv, "n:p:")) != -1) {
		switch (c) {
		case 'n':
			n = atol(optarg);
			break;
		case 'p':
			prog = optarg;
			break;
		default:
			n = -1;
		}
	}
	if (n < 0 || optind != argc) {
		fprintf(stderr, "usage: spawner [-n NR] [-p PROG]\n");
		return 2;
	}
	for (long i = 0; i < n; i++)
		ok += spawn_once(prog);
	printf("spawned %ld\n", ok);
	return ok == n ? 0 : 1;
}
