// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_call: a program whose work is done in a shared library, for the
 * symbolization tests: a thread named "symcall" loops
 *	call_outer() -> exe_static_step() -> symlib_burn() -> symlib_mix()
 *	for BURN_MS of CPU, then symlib_nap() -> symlib_nap_call() -> nanosleep()
 *	for SLEEP_MS
 * where call_outer and exe_static_step (static) are in the executable,
 * symlib_burn and symlib_nap (exported), symlib_mix and symlib_nap_call
 * (static) in the library.
 *
 *	sym_call [-n SECONDS] [-b BURN_MS] [-s SLEEP_MS] [-N NAME]
 *
 * -n: run time (decimal allowed; default: until SIGTERM/SIGINT).
 * -N: the worker's thread name instead of "symcall".
 * Prints "ready PID TID" once the worker runs.
 *
 * One source, three builds (tests/sym.mk):
 *	-DSYM_CALL_LIB   only the library part: libsymcall.so
 *	-DSYM_CALL_EXE   only the program, linked to libsymcall.so
 *	neither          both in one program (the plain workload build)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

uint64_t symlib_burn(uint64_t ns);
void symlib_nap(uint64_t ns);

#ifndef SYM_CALL_EXE
static uint64_t lib_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Not exported: only .symtab or the debug file can name it. */
static __attribute__((noinline)) uint64_t symlib_mix(uint64_t acc)
{
	volatile uint64_t v = acc;

	for (int i = 0; i < 100000; i++)
		v = v * 6364136223846793005ULL + 1442695040888963407ULL;
	return v;
}

/* The clock is read every ~100 us of arithmetic: samples land in symlib_mix. */
__attribute__((noinline)) uint64_t symlib_burn(uint64_t ns)
{
	uint64_t end = lib_cpu_ns() + ns, acc = 1;

	do
		acc = symlib_mix(acc);
	while (lib_cpu_ns() < end);
	return acc;
}

/*
 * libc's nanosleep() keeps the caller's frame pointer but pushes no frame,
 * so a frame-pointer walk from inside it skips its direct caller: this one
 * takes that hit, and symlib_nap() is named even without CFI.
 */
static __attribute__((noinline)) void symlib_nap_call(const struct timespec *ts)
{
	nanosleep(ts, NULL);
}

__attribute__((noinline)) void symlib_nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	symlib_nap_call(&ts);
}
#endif /* !SYM_CALL_EXE */

#ifndef SYM_CALL_LIB
static volatile sig_atomic_t stop;
static double run_s;
static long burn_ms = 30, sleep_ms = 10;
static const char *name = "symcall";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __attribute__((noinline)) uint64_t exe_static_step(uint64_t ns)
{
	return symlib_burn(ns) + 1;
}

__attribute__((noinline)) uint64_t call_outer(uint64_t ns)
{
	return exe_static_step(ns) + 1;
}

static void *worker_main(void *arg)
{
	uint64_t deadline_ns = UINT64_MAX;

	(void)arg;
	pthread_setname_np(pthread_self(), name);
	if (run_s > 0)
		deadline_ns = now_ns() + (uint64_t)(run_s * 1e9);
	printf("ready %d %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	while (!stop && now_ns() < deadline_ns) {
		call_outer(burn_ms * 1000000ULL);
		symlib_nap(sleep_ms * 1000000ULL);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t thread;
	int c, err;

	while ((c = getopt(argc, argv, "n:b:s:N:")) != -1) {
		switch (c) {
		case 'n':
			run_s = atof(optarg);
			break;
		case 'b':
			burn_ms = atol(optarg);
			break;
		case 's':
			sleep_ms = atol(optarg);
			break;
		case 'N':
			name = optarg;
			break;
		default:
			burn_ms = -1;
		}
	}
	if (burn_ms <= 0 || sleep_ms < 0 || optind != argc || strlen(name) > 15) {
		fprintf(stderr, "usage: sym_call [-n SECONDS] [-b BURN_MS] [-s SLEEP_MS] [-N NAME]\n");
		return 2;
	}

	/* No SA_RESTART: the napping worker should wake up and see the flag. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	err = pthread_create(&thread, NULL, worker_main, NULL);
	if (err) {
		fprintf(stderr, "sym_call: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(thread, NULL);
	return 0;
}
#endif /* !SYM_CALL_LIB */
