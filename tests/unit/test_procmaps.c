// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of src/procmaps.c: the /proc/PID/maps parser and lookup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "procmaps.h"
#include "unit.h"

static int parse_text(const char *text, struct proc_maps *out)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	if (!f) {
		/* fmemopen() refuses size 0: an empty file is /dev/null. */
		f = fopen("/dev/null", "r");
		if (!f)
			return -errno;
	}
	err = procmaps__parse(f, out);
	fclose(f);
	return err;
}

static const char sample[] =
	"55d0c8a00000-55d0c8a01000 r--p 00000000 fe:01 1837                      /usr/bin/my prog\n"
	"55d0c8a01000-55d0c8a21000 r-xp 00001000 fe:01 1837                      /usr/bin/my prog\n"
	"55d0c9000000-55d0c9021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f1c2e400000-7f1c2e428000 r-xp 00028000 103:02 99 /tmp/lib old.so (deleted)\n"
	"7f1c2e500000-7f1c2e501000 rw-p 00000000 00:00 0 \n"
	"7f1c2e600000-7f1c2e601000 rw-p 00000000 00:00 0\n"
	"7ffd1a3f0000-7ffd1a3f2000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static void test_parse(void)
{
	struct proc_maps m;
	const struct proc_map *p;
	int err;

	err = parse_text(sample, &m);
	CHECK_EQ_S64(err, 0, "sample maps parse");
	if (err)
		return;
	CHECK_EQ_U64(m.nr, 8, "all lines, the last one without newline");

	p = &m.maps[1];
	CHECK_EQ_U64(p->start, 0x55d0c8a01000ULL, "start");
	CHECK_EQ_U64(p->end, 0x55d0c8a21000ULL, "end");
	CHECK_EQ_U64(p->pgoff, 0x1000, "offset");
	CHECK_EQ_U64(p->dev_major, 0xfe, "dev major");
	CHECK_EQ_U64(p->dev_minor, 1, "dev minor");
	CHECK_EQ_U64(p->inode, 1837, "inode");
	CHECK_STREQ(p->perms, "r-xp", "perms");
	CHECK(proc_map__is_exec(p), "r-xp is executable");
	CHECK(!proc_map__is_exec(&m.maps[0]), "r--p is not executable");
	CHECK_STREQ(p->path, "/usr/bin/my prog", "path with a space");
	CHECK(!p->deleted, "not deleted");

	CHECK_STREQ(m.maps[2].path, "[heap]", "pseudo path kept");
	p = &m.maps[3];
	CHECK_STREQ(p->path, "/tmp/lib old.so", "(deleted) suffix stripped");
	CHECK(p->deleted, "deleted flagged");
	CHECK_EQ_U64(p->dev_major, 0x103, "3-digit major");
	CHECK(!m.maps[4].path, "anon with trailing space: no path");
	CHECK(!m.maps[5].path, "anon without trailing space: no path");
	CHECK_STREQ(m.maps[6].path, "[vdso]", "vdso");
	CHECK_EQ_U64(m.maps[7].start, 0xffffffffff600000ULL, "vsyscall start (64-bit)");
	CHECK_STREQ(m.maps[7].perms, "--xp", "vsyscall perms");
	procmaps__free(&m);
	CHECK(!m.maps && !m.nr, "free resets");
	procmaps__free(&m);
	procmaps__free(NULL);
}

static void test_find(void)
{
	struct proc_maps m;
	const struct proc_map *p;

	if (!CHECK_EQ_S64(parse_text(sample, &m), 0, "sample maps parse"))
		return;
	p = procmaps__find(&m, 0x55d0c8a01000ULL);
	CHECK(p == &m.maps[1], "first byte of a mapping");
	p = procmaps__find(&m, 0x55d0c8a20fffULL);
	CHECK(p == &m.maps[1], "last byte of a mapping");
	p = procmaps__find(&m, 0x55d0c8a00fffULL);
	CHECK(p == &m.maps[0], "last byte of the previous mapping");
	CHECK(!procmaps__find(&m, 0x55d0c8a21000ULL), "end is exclusive (gap after it)");
	CHECK(!procmaps__find(&m, 0x1000), "below every mapping");
	CHECK(!procmaps__find(&m, 0), "address 0");
	p = procmaps__find(&m, ~0ULL - 0x100);
	CHECK(!p, "above every mapping");
	p = procmaps__find(&m, 0xffffffffff600010ULL);
	CHECK(p == &m.maps[7], "last mapping");
	procmaps__free(&m);

	m.maps = NULL;
	m.nr = 0;
	CHECK(!procmaps__find(&m, 0x1000), "empty maps");
	CHECK(!procmaps__find(NULL, 0x1000), "NULL maps");
}

static void test_unsorted(void)
{
	struct proc_maps m;

	if (!CHECK_EQ_S64(parse_text("3000-4000 r-xp 0 0:0 0\n1000-2000 r-xp 0 0:0 0\n", &m), 0,
			  "unsorted input parses"))
		return;
	CHECK(m.nr == 2 && m.maps[0].start == 0x1000, "sorted by start");
	CHECK(procmaps__find(&m, 0x1800) == &m.maps[0], "found after sorting");
	procmaps__free(&m);
}

static void test_empty(void)
{
	struct proc_maps m;

	CHECK_EQ_S64(parse_text("", &m), 0, "empty input");
	CHECK_EQ_U64(m.nr, 0, "no mappings");
	procmaps__free(&m);
	CHECK_EQ_S64(parse_text("\n\n", &m), 0, "blank lines only");
	CHECK_EQ_U64(m.nr, 0, "blank lines are no mappings");
	procmaps__free(&m);
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"garbage\n",
		"1000-2000\n",
		"1000 2000 r-xp 00000000 00:00 0\n",
		"1000-2000 r-xp 00000000 00:00\n",
		"1000-2000 r-xp 00000000 0000 0 /x\n",
		"1000-2000 rwxq 00000000 00:00 0\n",
		"1000-2000 r-x 00000000 00:00 0\n",
		"1000-2000 r-xp 0000000g 00:00 0\n",
		"1000-2000 r-xp 00000000 00:00 12ab /x\n",
		"2000-1000 r-xp 00000000 00:00 0\n",
		"1000-1000 r-xp 00000000 00:00 0\n",
		"-2000 r-xp 00000000 00:00 0\n",
		"11112222333344445-ffffffffffffffff r-xp 0 00:00 0\n",
		"1000-2000 r-xp 00000000 00:00 99999999999999999999999 /x\n",
		"1000-2000 r-xp 00000000 1ffffffff:00 0 /x\n",
		"1000-2000 r-xp 00000000 00:00 0 /ok\nbroken line\n",
	};
	struct proc_maps m;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m.maps = (void *)1; /* must be reset even on failure */
		CHECK_EQ_S64(parse_text(bad[i], &m), -EINVAL, "malformed: %s", bad[i]);
		CHECK(!m.maps && !m.nr, "nothing returned for: %s", bad[i]);
	}
}

/* Random bytes and mutated lines: any result is fine, a crash or leak is not. */
static void test_fuzz(void)
{
	char text[512];
	struct proc_maps m;
	unsigned int seed = 42, i, j, ok = 0;

	for (i = 0; i < 20000; i++) {
		size_t len = strlen(sample) < sizeof(text) - 1 ? strlen(sample) : sizeof(text) - 1;

		memcpy(text, sample, len);
		text[len] = '\0';
		for (j = 0; j < 1 + i % 4; j++) {
			size_t at = rand_r(&seed) % len;

			text[at] = i % 3 ? " -:0a\n("[rand_r(&seed) % 7] : rand_r(&seed) % 255 + 1;
		}
		if (!parse_text(text, &m)) {
			ok++;
			procmaps__find(&m, 0x55d0c8a01234ULL);
			procmaps__free(&m);
		}
	}
	CHECK(1, "20000 mutated inputs without a crash (%u parsed)", ok);
}

static void test_read_self(void)
{
	struct proc_maps m;
	const struct proc_map *p;

	if (!CHECK_EQ_S64(procmaps__read(getpid(), &m), 0, "read /proc/self maps"))
		return;
	p = procmaps__find(&m, (unsigned long)test_read_self);
	CHECK(p && proc_map__is_exec(p), "own code is in an executable mapping");
	CHECK(p && p->path && strstr(p->path, "test_procmaps"), "own code maps our binary (%s)",
	      p && p->path ? p->path : "none");
	procmaps__free(&m);
	CHECK_EQ_S64(procmaps__read(0x7ffffff0, &m), -ESRCH, "nonexistent pid: -ESRCH");
	CHECK_EQ_S64(procmaps__read(-1, &m), -EINVAL, "negative pid: -EINVAL");
}

static void test_open_file(void)
{
	static const char secret[] = "wprof procmaps read_mem";
	struct proc_maps m;
	const struct proc_map *p;
	struct stat st;
	char buf[sizeof(secret)];
	int fd;

	if (!CHECK_EQ_S64(procmaps__read(getpid(), &m), 0, "read /proc/self maps"))
		return;
	p = procmaps__find(&m, (unsigned long)test_open_file);
	fd = p ? procmaps__open_file(getpid(), p) : -1;
	CHECK(fd >= 0 && !fstat(fd, &st) && st.st_ino == p->inode,
	      "opens the file of our code mapping (%d)", fd);
	if (fd >= 0)
		close(fd);
	p = procmaps__find(&m, (unsigned long)&fd);
	CHECK(p && procmaps__open_file(getpid(), p) < 0, "no file behind the stack");

	CHECK_EQ_S64(procmaps__read_mem(getpid(), (unsigned long)secret, buf, sizeof(buf)), 0,
		     "read our own memory");
	CHECK(!memcmp(buf, secret, sizeof(buf)), "same bytes");
	CHECK(procmaps__read_mem(getpid(), 0x1000, buf, sizeof(buf)) < 0, "unmapped memory fails");
	CHECK_EQ_S64(procmaps__read_mem(0x7ffffff0, 0x1000, buf, sizeof(buf)), -ESRCH,
		     "memory of a nonexistent pid: -ESRCH");
	procmaps__free(&m);
}

/* A FIFO where a mapped file was is not opened. */
static void test_open_not_regular(void)
{
	char dir[] = "/tmp/wprof-pm-XXXXXX", path[64];
	struct proc_maps m;
	struct proc_map fake;
	const struct proc_map *p;

	if (!CHECK(mkdtemp(dir), "temporary directory"))
		return;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (CHECK(mkfifo(path, 0600) == 0, "FIFO %s", path) &&
	    CHECK_EQ_S64(procmaps__read(getpid(), &m), 0, "read /proc/self maps")) {
		p = procmaps__find(&m, (unsigned long)test_open_not_regular);
		fake = *p;
		fake.start = 0x1000; /* no map_files entry: the path is tried */
		fake.end = 0x2000;
		fake.path = path;
		CHECK_EQ_S64(procmaps__open_file(getpid(), &fake), -EINVAL,
			     "a FIFO is never opened (it would block or consume data)");
		procmaps__free(&m);
	}
	unlink(path);
	rmdir(dir);
}

static void test_start_time_vdso(void)
{
	unsigned long long a = 0, b = 0;
	struct proc_maps m;
	size_t i, len = 0;
	void *img = NULL;

	CHECK_EQ_S64(procmaps__start_time(getpid(), (__u64 *)&a), 0, "our start time");
	CHECK(a > 0 && !procmaps__start_time(getppid(), (__u64 *)&b) && b <= a,
	      "started after our parent (%llu, %llu)", a, b);
	CHECK_EQ_S64(procmaps__start_time(0x7ffffff0, (__u64 *)&a), -ESRCH,
		     "start time of a nonexistent pid: -ESRCH");
	if (!CHECK_EQ_S64(procmaps__read(getpid(), &m), 0, "read /proc/self maps"))
		return;
	for (i = 0; i < m.nr; i++)
		if (m.maps[i].path && !strcmp(m.maps[i].path, "[vdso]"))
			img = procmaps__copy_vdso(getpid(), &m.maps[i], &len);
	if (img)
		CHECK(len >= 4 && !memcmp(img, "\177ELF", 4), "vDSO image copied (%zu bytes)", len);
	else
		fprintf(stderr, "skip test_start_time_vdso: no vDSO mapped (valgrind?)\n");
	free(img);
	procmaps__free(&m);
}

static bool has_map_of(const struct proc_maps *m, __u64 addr, const struct proc_maps *all)
{
	const struct proc_map *want = procmaps__find(all, addr), *got = procmaps__find(m, addr);

	return want && got && got->start == want->start && got->inode == want->inode;
}

/* What an exec maps, out of a live process's maps (this one's: libc is not of it). */
static void test_at_exec_self(void)
{
	struct proc_maps all, ex;
	__u64 start, base;

	if (!CHECK_EQ_S64(procmaps__read_proc(getpid(), &start, &all), 0, "read own maps"))
		return;
	/* under valgrind the process's own code (start_code) is valgrind's */
	if (!has_map_of(&all, (uintptr_t)test_at_exec_self, &all) ||
	    procmaps__find(&all, all.start_code) != procmaps__find(&all, (uintptr_t)test_at_exec_self)) {
		printf("SKIP test_at_exec_self: this process's program is not this test's\n");
		procmaps__free(&all);
		return;
	}
	CHECK(all.read_ns > 0, "read time kept");
	CHECK_EQ_S64(procmaps__interp_base(getpid(), &base), 0, "own auxv read");
	CHECK_EQ_U64(base, getauxval(AT_BASE), "AT_BASE as libc's getauxval() has it");
	if (!CHECK_EQ_S64(procmaps__at_exec(&all, base, &ex), 0, "exec's mappings found"))
		goto out;
	CHECK(has_map_of(&ex, (uintptr_t)test_at_exec_self, &all), "the program's code");
	CHECK(has_map_of(&ex, base, &all), "the loader's first mapping");
	CHECK(!has_map_of(&ex, (uintptr_t)malloc, &all), "not libc's code (the loader's doing)");
	CHECK_EQ_U64(ex.start_stack, all.start_stack, "start of stack kept");
	CHECK_EQ_U64(ex.read_ns, all.read_ns, "read time kept");
	CHECK(procmaps__exec_pages(&ex) < procmaps__exec_pages(&all), "less code than the whole");
	procmaps__free(&ex);
out:
	procmaps__free(&all);
}

static void test_at_exec_text(void)
{
	struct proc_maps m, ex;

	if (parse_text(sample, &m))
		return;
	m.start_code = 0x55d0c8a01000ULL;
	CHECK_EQ_S64(procmaps__at_exec(&m, 0, &ex), 0, "no interpreter: a static program");
	CHECK_EQ_U64(ex.nr, 3, "its two mappings and the vDSO");
	CHECK(ex.nr == 3 && !strcmp(ex.maps[2].path, "[vdso]"), "the vDSO last");
	/* the vDSO and the program's r-x mapping, not [vsyscall] nor the deleted library */
	CHECK_EQ_U64(procmaps__exec_pages(&ex), 0x20 + 2, "exec pages");
	CHECK_EQ_U64(procmaps__exec_pages(&m), 0x20 + 0x28 + 2, "exec pages of all");
	procmaps__free(&ex);
	m.start_code = 0x55d0c9000000ULL; /* the heap: no file */
	CHECK_EQ_S64(procmaps__at_exec(&m, 0, &ex), -ENOENT, "no program code: -ENOENT");
	CHECK(!ex.nr && !ex.maps, "and nothing copied");
	procmaps__free(&m);
}

int main(void)
{
	test_parse();
	test_find();
	test_unsorted();
	test_empty();
	test_malformed();
	test_fuzz();
	test_read_self();
	test_open_file();
	test_open_not_regular();
	test_start_time_vdso();
	test_at_exec_self();
	test_at_exec_text();
	return unit_done();
}
