// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization benchmark: the time a fresh symbolizer takes to name 10,000
 * distinct stacks of 20 frames whose addresses are spread over 20 shared
 * libraries (the fixture sbdriver maps libsb0.so .. libsb19.so, 50
 * functions each), add_pid and first-time indexing included. Every frame
 * is checked against the function it was taken from.
 *
 *	symbench [--check] [--inlines] [--driver PATH]
 *
 * Prints "symbolize: 10000 stacks x 20 frames over 20 modules in X.XXX s".
 * Exits 1 when a frame is misnamed, or with --check when that took more
 * than a second. --inlines asks for inlined frames too
 * (symbolizer__user_frames()). The driver is found next to this program,
 * in ../fixtures/sbdriver, unless --driver says where.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "symbolize.h"

#define NR_STACKS 10000
#define NR_FRAMES 20
#define NR_MODULES 20
#define NR_FUNCS (NR_MODULES * 50)
/* Every function of libsbN.so is longer than this (sblib.c). */
#define MAX_OFFSET 48
#define LIMIT_S 1.0

struct func {
	char name[32];
	unsigned long long addr;
};

static struct func funcs[NR_FUNCS];
static size_t nr_funcs;

/* xorshift64: the same stacks every run */
static unsigned long long rnd(void)
{
	static unsigned long long x = 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Start the driver; read its functions. Its pid, or -1. */
static pid_t start_driver(const char *driver)
{
	char dir[PATH_MAX], line[256];
	int fds[2];
	pid_t pid;
	FILE *out;

	snprintf(dir, sizeof(dir), "%s", driver);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(driver, driver, dirname(dir), (char *)NULL);
		fprintf(stderr, "symbench: cannot run %s: %s\n", driver, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	while (out && fgets(line, sizeof(line), out) && strncmp(line, "ready", 5)) {
		struct func *f = &funcs[nr_funcs];

		if (nr_funcs < NR_FUNCS && sscanf(line, "%31s %llx", f->name, &f->addr) == 2)
			nr_funcs++;
	}
	if (out)
		fclose(out);
	return pid;
}

int main(int argc, char **argv)
{
	static unsigned short stack_func[NR_STACKS][NR_FRAMES];
	static unsigned char stack_off[NR_STACKS][NR_FRAMES];
	char driver[PATH_MAX], self[PATH_MAX], names[4][SYMBOLIZER_NAME_LEN];
	bool check = false, inlines = false;
	unsigned long long wrong = 0;
	struct symbolizer_stats st;
	struct symbolizer *s;
	double t0, secs;
	ssize_t len;
	pid_t pid;
	int i, j, ret = 0;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[len > 0 ? len : 0] = '\0';
	snprintf(driver, sizeof(driver), "%s/../fixtures/sbdriver", dirname(self));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check")) {
			check = true;
		} else if (!strcmp(argv[i], "--inlines")) {
			inlines = true;
		} else if (!strcmp(argv[i], "--driver") && i + 1 < argc) {
			snprintf(driver, sizeof(driver), "%s", argv[++i]);
		} else {
			fprintf(stderr, "usage: symbench [--check] [--inlines] [--driver PATH]\n");
			return 2;
		}
	}
	pid = start_driver(driver);
	if (pid < 0 || nr_funcs != NR_FUNCS) {
		fprintf(stderr, "symbench: %s reported %zu functions, want %d\n", driver, nr_funcs,
			NR_FUNCS);
		ret = 1;
		goto out;
	}
	/*
	 * Random frames: 1000 functions x 48 offsets give 48,000 addresses, so
	 * 20-frame stacks are distinct (a repeat has odds of about 1e-90).
	 */
	for (i = 0; i < NR_STACKS; i++) {
		for (j = 0; j < NR_FRAMES; j++) {
			stack_func[i][j] = rnd() % NR_FUNCS;
			stack_off[i][j] = rnd() % MAX_OFFSET;
		}
	}

	t0 = now_s();
	s = symbolizer__new();
	if (!s || symbolizer__add_pid(s, pid)) {
		fprintf(stderr, "symbench: cannot capture pid %d\n", pid);
		ret = 1;
		goto out;
	}
	for (i = 0; i < NR_STACKS; i++) {
		for (j = 0; j < NR_FRAMES; j++) {
			const struct func *f = &funcs[stack_func[i][j]];
			__u64 ip = f->addr + stack_off[i][j];
			int n = symbolizer__user_frames(s, pid, ip, inlines, names, 4);

			if (n < 1 || strcmp(names[0], f->name)) {
				if (!wrong++)
					fprintf(stderr, "symbench: 0x%llx is \"%s\", want \"%s\"\n",
						(unsigned long long)ip, n > 0 ? names[0] : "",
						f->name);
			}
		}
	}
	secs = now_s() - t0;
	symbolizer__stats(s, &st);
	symbolizer__free(s);

	printf("symbolize: %d stacks x %d frames over %d modules in %.3f s\n", NR_STACKS,
	       NR_FRAMES, NR_MODULES, secs);
	fprintf(stderr, "symbench: %llu named, %llu fallback, %llu ELF images, %llu misnamed%s\n",
		(unsigned long long)st.user_named, (unsigned long long)st.user_fallback,
		(unsigned long long)st.files, wrong, inlines ? " (with inlined frames)" : "");
	if (wrong)
		ret = 1;
	if (check && secs > LIMIT_S) {
		fprintf(stderr, "symbench: over the limit of %.1f s\n", LIMIT_S);
		ret = 1;
	}
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return ret;
}
