// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/symbolize.c and src/kallsyms.c, on the fixtures of
 * tests/symbolize.mk: the PIE $OUT/tests/fixtures/wpfix, linked to
 * libwpfix.so, runs as a child and prints the addresses of its functions
 * (ground truth); the test names them while it runs and after it exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <gelf.h>

#include "kallsyms.h"
#include "procmaps.h"
#include "symbolize.h"
#include "unit.h"

#define MAX_LABELS 32

struct child {
	pid_t pid;
	bool reaped; /* pid stays known: the test names addresses of the exited process */
	FILE *out;
	size_t nr;
	char label[MAX_LABELS][64];
	unsigned long long addr[MAX_LABELS];
};

static char fixture_dir[512];

/* Read "label 0xaddr" lines until @until (or EOF). 0 or -1. */
static int child_read(struct child *c, const char *until)
{
	char line[256], label[64];
	unsigned long long addr;

	while (fgets(line, sizeof(line), c->out)) {
		if (!strncmp(line, until, strlen(until)))
			return 0;
		if (sscanf(line, "%63s %llx", label, &addr) == 2 && c->nr < MAX_LABELS) {
			snprintf(c->label[c->nr], sizeof(c->label[0]), "%s", label);
			c->addr[c->nr++] = addr;
		}
	}
	return -1;
}

static int child_start(struct child *c, char *const argv[])
{
	int fds[2];

	memset(c, 0, sizeof(*c));
	if (pipe(fds))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	c->out = fdopen(fds[0], "r");
	return c->out ? child_read(c, "ready") : -1;
}

static void child_stop(struct child *c)
{
	if (c->pid > 0 && !c->reaped) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->reaped = true;
	}
	if (c->out)
		fclose(c->out);
	c->out = NULL;
}

static unsigned long long child_addr(const struct child *c, const char *label)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->label[i], label))
			return c->addr[i];
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open(from, O_RDONLY);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			err = -1;
	if (in < 0 || out < 0)
		err = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err;
}

/* Check that @ip of @pid is named @want (a prefix if it ends with '.'), as a symbol. */
static void check_name(struct symbolizer *s, int pid, unsigned long long ip, const char *want,
		       const char *what)
{
	char buf[256], details[512];
	size_t len = strlen(want);
	bool ok;
	int ret;

	ret = symbolizer__user(s, pid, ip, buf, sizeof(buf));
	ok = ret == 0 && (want[len - 1] == '.' ? !strncmp(buf, want, len) : !strcmp(buf, want));
	snprintf(details, sizeof(details), "got \"%s\" (ret %d), want \"%s%s\"", buf, ret, want,
		 want[len - 1] == '.' ? "<suffix>" : "");
	unit_report(ok, "test_user", details, "%s: 0x%llx is %s%s", what, ip, want,
		    want[len - 1] == '.' ? "*" : "");
}

static void check_fallback(struct symbolizer *s, int pid, unsigned long long ip,
			   const char *want, const char *what)
{
	char buf[256], details[512];
	int ret;

	ret = symbolizer__user(s, pid, ip, buf, sizeof(buf));
	snprintf(details, sizeof(details), "got \"%s\" (ret %d), want \"%s\" (ret 1)", buf, ret,
		 want);
	unit_report(ret == 1 && !strcmp(buf, want), "test_user", details, "%s: %s", what, want);
}

/*
 * The names a process should see for the fixture's functions, @delta bytes
 * into them. A non-PIE executable's pointers to library functions are its
 * own PLT entries: @exe_only skips those.
 */
static void check_fixture_names(struct symbolizer *s, const struct child *c, int delta,
				const char *when, bool exe_only)
{
	static const char *const funcs[] = { "main",	     "fix_exe_static", "fix_exe_sleep",
					     "fix_lib_work", "fix_lib_static", "nanosleep" };
	char what[128];
	size_t i;

	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (exe_only && strncmp(funcs[i], "fix_exe", 7) && strcmp(funcs[i], "main"))
			continue;
		snprintf(what, sizeof(what), "%s, %s+%d", when, funcs[i], delta);
		check_name(s, c->pid, child_addr(c, funcs[i]) + delta, funcs[i], what);
	}
	/* Return addresses inside GCC clones; -1 as a stack walker's caller does. */
	snprintf(what, sizeof(what), "%s, executable's clone", when);
	check_name(s, c->pid, child_addr(c, "fix_exe_clone_pc") - 1, "fix_exe_clone.", what);
	snprintf(what, sizeof(what), "%s, library's clone", when);
	check_name(s, c->pid, child_addr(c, "fix_lib_clone_pc") - 1, "fix_lib_clone.constprop.",
		   what);
}

/* Our own vDSO: the offset of a function and the names at that offset. */
static int vdso_function(unsigned long long *off, char names[4][64], int *nr_names)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct proc_maps self;
	const struct proc_map *m;
	unsigned long long value = 0, load_vaddr = 0;
	Elf_Scn *scn = NULL;
	size_t size = 0, i;
	GElf_Phdr ph;
	void *copy;
	Elf *elf;
	int err = -1;

	if (!base || procmaps__read(getpid(), &self))
		return -1;
	m = procmaps__find(&self, base);
	size = m ? m->end - m->start : 0;
	procmaps__free(&self);
	if (!size || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	/* libelf gets a private copy: the vDSO is read-only. */
	copy = malloc(size);
	if (!copy)
		return -1;
	memcpy(copy, (void *)base, size);
	elf = elf_memory(copy, size);
	for (i = 0; elf && gelf_getphdr(elf, i, &ph); i++)
		if (ph.p_type == PT_LOAD) {
			load_vaddr = ph.p_vaddr - ph.p_offset;
			break;
		}
	*nr_names = 0;
	/* Two passes over .dynsym: find clock_gettime's address, then all of its names. */
	for (int pass = 0; pass < 2; pass++) {
		while (elf && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			GElf_Sym sym;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
				continue;
			data = elf_getdata(scn, NULL);
			for (i = 0; data && gelf_getsym(data, i, &sym); i++) {
				const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);

				if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
					continue;
				if (!pass && !strcmp(name, "__vdso_clock_gettime"))
					value = sym.st_value;
				if (pass && value && sym.st_value == value && *nr_names < 4)
					snprintf(names[(*nr_names)++], 64, "%s", name);
			}
		}
	}
	if (value && *nr_names) {
		*off = value - load_vaddr;
		err = 0;
	}
	elf_end(elf);
	free(copy);
	return err;
}

static void check_vdso(struct symbolizer *s, int pid, unsigned long long vdso_start,
		       const char *what)
{
	char names[4][64], buf[256];
	unsigned long long off;
	int nr = 0, i, ret;
	bool ok = false;

	if (vdso_function(&off, names, &nr)) {
		fprintf(stderr, "skip test_user: vDSO check, no __vdso_clock_gettime found\n");
		return;
	}
	ret = symbolizer__user(s, pid, vdso_start + off + 1, buf, sizeof(buf));
	for (i = 0; i < nr; i++)
		ok |= ret == 0 && !strcmp(buf, names[i]);
	unit_report(ok, "test_user", buf, "%s: vDSO function named (%s)", what, names[0]);
}

static unsigned long long map_start_of(int pid, const char *suffix, unsigned long long *pgoff,
				       unsigned long long ip)
{
	struct proc_maps m;
	const struct proc_map *p;
	unsigned long long start = 0;

	if (procmaps__read(pid, &m))
		return 0;
	p = procmaps__find(&m, ip);
	if (p && p->path && strlen(p->path) >= strlen(suffix) &&
	    !strcmp(p->path + strlen(p->path) - strlen(suffix), suffix)) {
		start = p->start;
		*pgoff = p->pgoff;
	}
	procmaps__free(&m);
	return start;
}

/* 200,000 distinct addresses spread over the executable mappings of @pid. */
static void check_speed(struct symbolizer *s, const struct proc_maps *m, int pid)
{
	struct timespec t0, t1;
	unsigned long long n = 0, named = 0;
	char buf[256];
	size_t i, nr_exec = 0;
	double secs;

	for (i = 0; i < m->nr; i++)
		nr_exec += proc_map__is_exec(&m->maps[i]);
	if (!nr_exec)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; n < 200000; i++) {
		const struct proc_map *p = &m->maps[i % m->nr];
		unsigned long long span = p->end - p->start;

		if (!proc_map__is_exec(p))
			continue;
		named += !symbolizer__user(s, pid, p->start + (n * 7919) % span, buf, sizeof(buf));
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (getenv("WPROF_NO_TIMING"))
		fprintf(stderr, "test_user: 200000 lookups took %.3f s\n", secs);
	else
		unit_report(secs < 1.0, "test_user", "too slow",
			    "200000 distinct addresses in %.3f s (%llu named)", secs, named);
}

static void test_user(void)
{
	char exe[600], nopie[600], lib[600], stripped[600], debuglink[600];
	char tmpdir[] = "/tmp/wprof-test-XXXXXX", deleted[600], want[300], buf[256];
	struct symbolizer_stats st0, st1;
	struct child c1 = {}, c2 = {}, c3 = {};
	struct symbolizer *s = NULL;
	struct proc_maps m1 = {};
	unsigned long long start, pgoff = 0, ip, vdso_start = 0;
	size_t i;
	int ret;

	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	snprintf(lib, sizeof(lib), "%s/libwpfix.so", fixture_dir);
	snprintf(stripped, sizeof(stripped), "%s/libwpfix-stripped.so", fixture_dir);
	snprintf(debuglink, sizeof(debuglink), "%s/libwpfix-debuglink.so", fixture_dir);
	snprintf(nopie, sizeof(nopie), "%s/wpfix-nopie", fixture_dir);
	if (!CHECK(access(exe, X_OK) == 0, "fixture %s exists (make test-bins)", exe))
		return;
	if (!CHECK(mkdtemp(tmpdir) != NULL, "temporary directory"))
		return;
	snprintf(deleted, sizeof(deleted), "%s/libwpfix-del.so", tmpdir);
	if (!CHECK(copy_file(lib, deleted) == 0, "copy of the library to %s", deleted))
		goto cleanup;

	if (!CHECK(child_start(&c1, (char *[]){ exe, stripped, deleted, debuglink, NULL }) == 0 &&
			   child_addr(&c1, "debuglink_fix_lib_work"),
		   "fixture child 1 runs and reports its addresses"))
		goto cleanup;
	if (!CHECK(child_start(&c2, (char *[]){ exe, NULL }) == 0, "fixture child 2 runs"))
		goto cleanup;
	if (!CHECK(child_start(&c3, (char *[]){ nopie, NULL }) == 0, "non-PIE child 3 runs"))
		goto cleanup;
	/* The child keeps the library mapped; its file is gone. */
	unlink(deleted);
	rmdir(tmpdir);

	s = symbolizer__new();
	if (!CHECK(s != NULL, "symbolizer__new"))
		goto cleanup;
	CHECK_EQ_S64(symbolizer__add_pid(s, c1.pid), 0, "add_pid of child 1");
	symbolizer__stats(s, &st0);
	CHECK(st0.files >= 5, "files of child 1 held (%llu)", (unsigned long long)st0.files);
	CHECK_EQ_S64(symbolizer__add_pid(s, c1.pid), 0, "add_pid again (refresh)");
	CHECK_EQ_S64(symbolizer__add_pid(s, c2.pid), 0, "add_pid of child 2");
	symbolizer__stats(s, &st1);
	CHECK_EQ_U64(st1.files, st0.files, "child 2 maps the same files: none opened again");

	CHECK_EQ_S64(symbolizer__add_pid(s, c3.pid), 0, "add_pid of non-PIE child 3");

	check_fixture_names(s, &c1, 0, "alive", false);
	check_fixture_names(s, &c2, 1, "child 2 alive", false);
	check_fixture_names(s, &c3, 1, "non-PIE child 3 alive", true);
	check_name(s, c1.pid, child_addr(&c1, "stripped_fix_lib_work") + 1, "fix_lib_work",
		   "alive, stripped copy, exported (.dynsym) function");

	/* Unload the stripped copy, refresh: its code must still be named from the old snapshot. */
	procmaps__read(c1.pid, &m1);
	ip = child_addr(&c1, "stripped_fix_lib_static");
	start = map_start_of(c1.pid, "/libwpfix-stripped.so", &pgoff, ip);
	kill(c1.pid, SIGUSR1);
	CHECK(child_read(&c1, "unloaded") == 0, "child 1 unloaded the stripped copy");
	CHECK(!map_start_of(c1.pid, "/libwpfix-stripped.so", &pgoff, ip), "copy unmapped");
	CHECK_EQ_S64(symbolizer__add_pid(s, c1.pid), 0, "add_pid after dlclose");
	for (i = 0; i < m1.nr; i++)
		if (m1.maps[i].path && !strcmp(m1.maps[i].path, "[vdso]"))
			vdso_start = m1.maps[i].start;

	child_stop(&c1);
	child_stop(&c2);
	child_stop(&c3);
	CHECK_EQ_S64(symbolizer__add_pid(s, c1.pid), -ESRCH, "add_pid of an exited process");

	check_fixture_names(s, &c1, 0, "exited (cached)", false);
	check_fixture_names(s, &c1, 2, "exited", false);
	check_fixture_names(s, &c3, 2, "non-PIE exited", true);
	check_name(s, c1.pid, child_addr(&c1, "debuglink_fix_lib_static") + 1, "fix_lib_static",
		   "static function of a stripped library, from its .gnu_debuglink file");
	check_name(s, c1.pid, child_addr(&c1, "stripped_fix_lib_work"), "fix_lib_work",
		   "exited, unloaded stripped copy, exported function");
	snprintf(want, sizeof(want), "libwpfix-stripped.so+0x%llx", ip + 1 - start + pgoff);
	if (CHECK(start != 0, "stripped copy mapping found"))
		check_fallback(s, c1.pid, ip + 1, want, "static function of the stripped copy");

	ip = child_addr(&c1, "deleted_fix_lib_work") + 1;
	ret = symbolizer__user(s, c1.pid, ip, buf, sizeof(buf));
	if (geteuid() == 0 || ret == 0)
		CHECK(ret == 0 && !strcmp(buf, "fix_lib_work"),
		      "deleted library named through map_files (got \"%s\")", buf);
	else
		CHECK(ret == 1 && !strncmp(buf, "libwpfix-del.so+0x", 18),
		      "deleted library, not root: file offset fallback (got \"%s\")", buf);
	if (vdso_start)
		check_vdso(s, c1.pid, vdso_start, "exited child");

	ip = child_addr(&c1, "anon");
	snprintf(want, sizeof(want), "[anon]+0x%llx", ip);
	check_fallback(s, c1.pid, ip, want, "anonymous memory");
	check_fallback(s, c1.pid, 0x1000, "[unmapped]+0x1000", "address in no mapping");
	check_fallback(s, 0x7ffffff0, 0x401234, "[unknown-pid-2147483632]+0x401234",
		       "pid never added");
	CHECK(symbolizer__user(s, c1.pid, 0x1000, NULL, 10) == -EINVAL, "NULL buffer: -EINVAL");
	ret = symbolizer__user(s, c1.pid, child_addr(&c1, "main"), buf, 4);
	CHECK(ret == 0 && !strcmp(buf, "mai"), "small buffer truncates (got \"%s\")", buf);

	symbolizer__stats(s, &st1);
	CHECK(st1.user_named > 20 && st1.user_fallback >= 4,
	      "stats count named %llu, fallback %llu",
	      (unsigned long long)st1.user_named, (unsigned long long)st1.user_fallback);
	check_speed(s, &m1, c1.pid);

	/* Our own process: vDSO captured from /proc/self/mem. */
	CHECK_EQ_S64(symbolizer__add_pid(s, getpid()), 0, "add_pid of ourselves");
	check_vdso(s, getpid(), getauxval(AT_SYSINFO_EHDR), "self");
	check_name(s, getpid(), (unsigned long)test_user + 1, "test_user", "self, own function");
	CHECK_EQ_S64(symbolizer__add_pid(s, 0), -EINVAL, "pid 0: -EINVAL");
cleanup:
	child_stop(&c1);
	child_stop(&c2);
	child_stop(&c3);
	unlink(deleted);
	rmdir(tmpdir);
	procmaps__free(&m1);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

static char *write_tmp(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/wprof-ksyms-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return NULL;
	}
	close(fd);
	return path;
}

static void test_kallsyms_file(void)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 T _text\n"
				   "ffffffff81000100 t helper_a\n"
				   "this line is garbage\n"
				   "ffffffff81000200 T __x64_sys_foo\n"
				   "ffffffff81000200 T sys_foo\n"
				   "ffffffff81000300 D some_data\n"
				   "ffffffff81000400 W weak_fn\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n"
				   "ffffffffc0001100 r mod_rodata\t[mymod]\n"
				   "0000000000000000 A fixed_percpu_data\n";
	struct kallsyms *ks;
	__u64 off = 0;
	char *path;

	path = write_tmp(text);
	if (!CHECK(path, "temporary kallsyms file"))
		return;
	ks = kallsyms__load(path);
	unlink(path);
	if (!CHECK(ks, "load (errno %d)", errno))
		return;
	CHECK_EQ_U64(kallsyms__count(ks), 7, "text symbols only");
	CHECK_STREQ(kallsyms__find(ks, 0xffffffff81000050ULL, &off), "_text", "alias: shorter");
	CHECK_EQ_U64(off, 0x50, "offset");
	CHECK_STREQ(kallsyms__find(ks, 0xffffffff81000100ULL, &off), "helper_a", "first byte");
	CHECK_EQ_U64(off, 0, "offset 0");
	CHECK_STREQ(kallsyms__find(ks, 0xffffffff810001ffULL, NULL), "helper_a", "last byte");
	CHECK_STREQ(kallsyms__find(ks, 0xffffffff81000210ULL, NULL), "sys_foo",
		    "alias: fewer underscores");
	CHECK(!kallsyms__find(ks, 0xffffffff81000310ULL, NULL), "data symbol bounds the function");
	CHECK_STREQ(kallsyms__find(ks, 0xffffffff81000400ULL, NULL), "weak_fn", "weak text");
	CHECK(!kallsyms__find(ks, 0xffffffff81000400ULL + (2 << 20), NULL),
	      "far past the last symbol: not found");
	CHECK_STREQ(kallsyms__find(ks, 0xffffffffc0001010ULL, NULL), "mod_fn", "module symbol");
	CHECK(!kallsyms__find(ks, 0xffffffffc0001110ULL, NULL), "module rodata");
	CHECK(!kallsyms__find(ks, 0xffffffff80000000ULL, NULL), "below the kernel");
	CHECK(!kallsyms__find(NULL, 0xffffffff81000100ULL, NULL), "NULL kallsyms");
	kallsyms__free(ks);
	kallsyms__free(NULL);

	path = write_tmp("0000000000000000 T _text\n0000000000000000 t foo\n");
	ks = path ? kallsyms__load(path) : NULL;
	CHECK(!ks && errno == EPERM, "all addresses zero (kptr_restrict): EPERM");
	if (path)
		unlink(path);
	kallsyms__free(ks);
	ks = kallsyms__load("/nonexistent/kallsyms");
	CHECK(!ks && errno == ENOENT, "missing file: ENOENT");
}

/* The address of @want in /proc/kallsyms, 0 if hidden or absent. */
static unsigned long long kallsyms_addr(const char *want)
{
	unsigned long long addr, found = 0;
	char line[512], type, name[256];
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && !strcmp(name, want)) {
			found = addr;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

static void test_kernel(void)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	unsigned long long addr = kallsyms_addr("do_nanosleep");
	char buf[128];
	int ret;

	if (!CHECK(s, "symbolizer__new"))
		return;
	if (addr) {
		ret = symbolizer__kernel(s, addr, buf, sizeof(buf));
		CHECK(ret == 0 && !strcmp(buf, "do_nanosleep"), "do_nanosleep (got \"%s\")", buf);
		ret = symbolizer__kernel(s, addr + 5, buf, sizeof(buf));
		CHECK(ret == 0 && !strcmp(buf, "do_nanosleep"), "inside do_nanosleep (got \"%s\")",
		      buf);
	} else {
		fprintf(stderr, "skip test_kernel: do_nanosleep: /proc/kallsyms hides addresses "
				"(kptr_restrict, or not root)\n");
	}
	ret = symbolizer__kernel(s, 0x10, buf, sizeof(buf));
	CHECK(ret == 1 && !strcmp(buf, "[kernel]+0x10"), "unknown kernel address (got \"%s\")",
	      buf);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.kernel_fallback, 1, "kernel fallback counted");
	symbolizer__free(s);
}

int main(void)
{
	const char *out = getenv("OUT");

	/* A wedged child must not hang the test run. */
	alarm(60);
	snprintf(fixture_dir, sizeof(fixture_dir), "%s/tests/fixtures",
		 out && *out ? out : "build");
	test_kallsyms_file();
	test_kernel();
	test_user();
	return unit_done();
}
