// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostnames: a process whose thread names hold what a terminal acts on or a
 * strict parser refuses, as any user can name their threads (the kernel
 * keeps 15 bytes, any but NUL). tests/integration/hostile_names.sh records
 * it as root and checks that no output passes those bytes on.
 *
 *	hostnames [ARG...]
 *
 * The main thread and six more, each looping { burn 2 ms; sleep 8 ms }, are
 * named by the table below (the test knows each name by its index). The
 * arguments are not read: they are there for /proc/PID/cmdline. Prints
 * "ready PID" once every thread has its name; runs until SIGTERM/SIGINT.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

static const char *const names[] = {
	"\033]0;pwned\007",                         /* sets the terminal's title */
	"\033[2J\033[Hclear",                       /* clears the screen */
	"x\nwprof: forged",                         /* a summary line of its own */
	"c1\x9b\x85\x7f\r",                         /* raw C1 (CSI, NEL), DEL, CR */
	"u8\xc2\x9b\xc0\xaf\xed\xa0\x80\xff",       /* C1 in UTF-8, overlong, surrogate, 0xff */
	"ok\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80",   /* valid: e acute, a CJK character, an emoji */
	"tr\xf5\xe0\x80\xaf\xe2\x82",               /* 0xf5, overlong, a character cut short */
};
#define NR_NAMES (sizeof(names) / sizeof(names[0]))

static volatile sig_atomic_t stop;
static pthread_barrier_t named;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t burn(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t acc = 1;

	do {
		for (int i = 0; i < 10000; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return acc;
}

static void loop(void)
{
	struct timespec nap = { 0, 8000000 };

	while (!stop) {
		burn(2000000);
		nanosleep(&nap, NULL);
	}
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), names[(uintptr_t)arg]);
	pthread_barrier_wait(&named);
	loop();
	return NULL;
}

int main(void)
{
	pthread_t th[NR_NAMES];
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	pthread_barrier_init(&named, NULL, NR_NAMES);
	for (uintptr_t i = 1; i < NR_NAMES; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	prctl(PR_SET_NAME, names[0]);
	pthread_barrier_wait(&named);
	printf("ready %d\n", getpid());
	fflush(stdout);
	loop();
	for (uintptr_t i = 1; i < NR_NAMES; i++)
		pthread_join(th[i], NULL);
	return 0;
}
