// SPDX-License-Identifier: GPL-2.0-only
/*
 * dlburn: code that appears after the start, and is gone before the end.
 * Waits WAIT_MS (or, with -g, until GO_FILE exists), then dlopen()s zlib (not linked in: mapped only from then
 * on), burns BURN_MS of its own CPU time in burn_in_lib() -> zlib's
 * crc32_z(), dlclose()s it (unmapped again) and naps AFTER_MS before it
 * exits.
 *
 *	dlburn [-w WAIT_MS | -g GO_FILE] [-b BURN_MS] [-a AFTER_MS]
 *
 * Prints "ready PID" at its start, "loaded" once zlib is mapped, and
 * "burned NS unmapped 0|1" at the end: the thread CPU time the burn took,
 * and whether zlib was gone from /proc/self/maps after dlclose().
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long (*crc_fn)(unsigned long crc, const unsigned char *buf, size_t len);

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static int zlib_mapped(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, "libz.so") != NULL;
	fclose(f);
	return found;
}

static unsigned long burn_in_lib(crc_fn crc32_z, long burn_ms, uint64_t *burned)
{
	static unsigned char buf[64 * 1024];
	uint64_t t0 = cpu_ns(), end = t0 + (uint64_t)burn_ms * 1000000ULL;
	unsigned long crc = 0;

	memset(buf, 0x5a, sizeof(buf));
	while (cpu_ns() < end)
		crc = crc32_z(crc, buf, sizeof(buf));
	*burned = cpu_ns() - t0;
	return crc;
}

int main(int argc, char **argv)
{
	long wait_ms = 1500, burn_ms = 1000, after_ms = 1000;
	const char *go = NULL;
	uint64_t burned = 0;
	crc_fn crc32_z;
	void *lib;
	int c;

	while ((c = getopt(argc, argv, "w:g:b:a:")) != -1) {
		switch (c) {
		case 'g':
			go = optarg;
			break;
		case 'w':
			wait_ms = atol(optarg);
			break;
		case 'b':
			burn_ms = atol(optarg);
			break;
		case 'a':
			after_ms = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: dlburn [-w WAIT_MS | -g GO_FILE] [-b BURN_MS] "
				"[-a AFTER_MS]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	if (go) {
		for (int i = 0; access(go, F_OK) && i < 6000; i++)
			nap_ms(10);
	} else {
		nap_ms(wait_ms);
	}
	lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlburn: %s\n", dlerror());
		return 1;
	}
	crc32_z = (crc_fn)dlsym(lib, "crc32_z");
	if (!crc32_z) {
		fprintf(stderr, "dlburn: no crc32_z in zlib: %s\n", dlerror());
		return 1;
	}
	printf("loaded\n");
	printf("crc %lx\n", burn_in_lib(crc32_z, burn_ms, &burned));
	dlclose(lib);
	printf("burned %llu unmapped %d\n", (unsigned long long)burned, zlib_mapped() == 0);
	nap_ms(after_ms);
	return 0;
}
