// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/symbolize.c, src/elfsyms.c and src/kallsyms.c, on the
 * fixtures of tests/symbolize.mk: the PIE $OUT/tests/fixtures/wpfix, linked
 * to libwpfix.so, runs as a child and prints the addresses of its functions
 * (ground truth); the test names them while it runs and after it exited.
 * Perf maps and namespaces: test_symns.c; demangling: test_demangle.c;
 * debuginfod: test_debuginfod.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <gelf.h>

#include "kallsyms.h"
#include "procmaps.h"
#include "symbolize.h"
#include "unit.h"
#include "util.h"
#include "../fixtures/fixchild.h"

/*
 * The names a process should see for the fixture's functions, @delta bytes
 * into them. A non-PIE executable's pointers to library functions are its
 * own PLT entries: @exe_only skips those.
 */
static void check_fixture_names(struct symbolizer *s, const struct child *c, int delta,
				const char *when, bool exe_only)
{
	static const char *const funcs[] = { "main",	     "fix_exe_static", "fix_exe_sleep",
					     "fix_lib_work", "fix_lib_static", "nanosleep",
					     "fclose" };
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
	snprintf(what, sizeof(what), "%s, inlined code named by its real function", when);
	check_name(s, c->pid, child_addr(c, "fix_inl_pc") - 1, "fix_inl_outer", what);
	if (exe_only) {
		/* the PLT stub a non-PIE's pointer is: named after its target, as perf does */
		snprintf(what, sizeof(what), "%s, the executable's PLT stub of fix_lib_work+%d",
			 when, delta);
		check_name(s, c->pid, child_addr(c, "fix_lib_work") + delta, "fix_lib_work@plt",
			   what);
		return;
	}
	snprintf(what, sizeof(what), "%s, library's clone", when);
	check_name(s, c->pid, child_addr(c, "fix_lib_clone_pc") - 1, "fix_lib_clone.constprop.",
		   what);
	/* .symtab says fix_lib_versioned@WPFIX_1 and fix_lib_versioned@@WPFIX_2 */
	snprintf(what, sizeof(what), "%s, old symbol version, no suffix", when);
	check_name(s, c->pid, child_addr(c, "fix_lib_ver1") + delta, "fix_lib_versioned", what);
	snprintf(what, sizeof(what), "%s, default symbol version, no suffix", when);
	check_name(s, c->pid, child_addr(c, "fix_lib_ver2") + delta, "fix_lib_versioned", what);
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
	/* CPU time, not wall: a guard against a slow path, whatever else the machine runs */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (i = 0; n < 200000; i++) {
		const struct proc_map *p = &m->maps[i % m->nr];
		unsigned long long span = p->end - p->start;

		if (!proc_map__is_exec(p))
			continue;
		named += !symbolizer__user(s, pid, p->start + (n * 7919) % span, buf, sizeof(buf));
		n++;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (getenv("WPROF_NO_TIMING"))
		fprintf(stderr, "test_user: 200000 lookups took %.3f s\n", secs);
	else
		unit_report(secs < 1.0, "test_user", "too slow",
			    "200000 distinct addresses in %.3f s of CPU (%llu named)", secs, named);
}

static void test_user(void)
{
	char exe[600], nopie[600], lib[600], stripped[600], debuglink[600], buildid[600], twin[600];
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
	snprintf(buildid, sizeof(buildid), "%s/libwpfix-buildid.so", fixture_dir);
	snprintf(twin, sizeof(twin), "%s/libwpfix-twin.so", fixture_dir);
	snprintf(nopie, sizeof(nopie), "%s/wpfix-nopie", fixture_dir);
	if (!CHECK(access(exe, X_OK) == 0, "fixture %s exists (make test-bins)", exe))
		return;
	if (!CHECK(mkdtemp(tmpdir) != NULL, "temporary directory"))
		return;
	snprintf(deleted, sizeof(deleted), "%s/libwpfix-del.so", tmpdir);
	if (!CHECK(copy_file(lib, deleted) == 0, "copy of the library to %s", deleted))
		goto cleanup;

	if (!CHECK(child_start(&c1, (char *[]){ exe, stripped, deleted, debuglink, buildid, twin,
						NULL }) == 0 &&
			   child_addr(&c1, "twin_fix_lib_work"),
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
	/* libwpfix-twin.so, and as root the deleted copy, have the build-id of libwpfix.so */
	CHECK(st0.files_shared >= 1, "files of one build-id share an index (%llu shared)",
	      (unsigned long long)st0.files_shared);
	CHECK_EQ_S64(symbolizer__add_pid(s, c1.pid), 0, "add_pid again (refresh)");
	CHECK_EQ_S64(symbolizer__add_pid(s, c2.pid), 0, "add_pid of child 2");
	symbolizer__stats(s, &st1);
	CHECK_EQ_U64(st1.files, st0.files, "child 2 maps the same files: none opened again");

	CHECK_EQ_S64(symbolizer__add_pid(s, c3.pid), 0, "add_pid of non-PIE child 3");

	check_fixture_names(s, &c1, 0, "alive", false);
	check_fixture_names(s, &c2, 1, "child 2 alive", false);
	check_fixture_names(s, &c3, 1, "non-PIE child 3 alive", true);
	check_name(s, c1.pid, child_addr(&c1, "stripped_fix_lib_work") + 1, "fix_lib_work",
		   "alive, stripped build, exported (.dynsym) function");
	check_name(s, c1.pid, child_addr(&c1, "twin_fix_lib_static") + 1, "fix_lib_static",
		   "static function of a stripped twin, through the index of its build-id");
	check_name(s, c1.pid, child_addr(&c1, "stripped_fix_lib_init") + 1, "_init",
		   "alive, stripped build, its .init section (a constructor's entry)");

	/* Unload the stripped build, refresh: its code must still be named from the old snapshot. */
	procmaps__read(c1.pid, &m1);
	ip = child_addr(&c1, "stripped_fix_lib_static");
	start = map_start_of(c1.pid, "/libwpfix-stripped.so", &pgoff, ip);
	kill(c1.pid, SIGUSR1);
	CHECK(child_read(&c1, "unloaded") == 0, "child 1 unloaded the stripped build");
	CHECK(!map_start_of(c1.pid, "/libwpfix-stripped.so", &pgoff, ip), "build unmapped");
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
		   "exited, unloaded stripped build, exported function");
	snprintf(want, sizeof(want), "libwpfix-stripped.so+0x%llx", ip + 1 - start + pgoff);
	if (CHECK(start != 0, "stripped build mapping found"))
		check_fallback(s, c1.pid, ip + 1, want, "static function of the stripped build");
	ip = child_addr(&c1, "buildid_fix_lib_static") + 1;
	ret = symbolizer__user(s, c1.pid, ip, buf, sizeof(buf));
	CHECK(ret == 1 && strstr(buf, "libwpfix-buildid.so+0x") == buf,
	      "debug file in a directory not searched: file offset fallback (got \"%s\")", buf);

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
	check_fallback(s, c1.pid, 0x1000, "[unmapped]", "address in no mapping");
	check_fallback(s, c1.pid, 0x2000, "[unmapped]", "another: the same frame");
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

/* A stripped library whose debug file is only found by build-id, under a directory we name. */
static void test_debug_dirs(void)
{
	char exe[600], buildid[600], dir[PATH_MAX + 16], real[PATH_MAX], buf[256];
	struct symbolizer *s = symbolizer__new();
	struct child c = {};
	unsigned long long ip;
	int ret;

	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	snprintf(buildid, sizeof(buildid), "%s/libwpfix-buildid.so", fixture_dir);
	snprintf(dir, sizeof(dir), "%s/debug", fixture_dir);
	if (!CHECK(s && realpath(dir, real), "symbolizer, debug directory %s", dir))
		goto out;
	CHECK_EQ_S64(symbolizer__set_debug_dirs(s, "relative/dir"), -EINVAL,
		     "relative debug directory: -EINVAL");
	CHECK_EQ_S64(symbolizer__set_debug_dirs(s, "/nonexistent:relative"), -EINVAL,
		     "relative entry in a list: -EINVAL");
	CHECK_EQ_S64(symbolizer__set_debug_dirs(s, "/nonexistent"), 0, "absolute directory");
	CHECK_EQ_S64(symbolizer__set_debug_dirs(s, NULL), 0, "back to the default");
	snprintf(dir, sizeof(dir), "/nonexistent:%s", real);
	CHECK_EQ_S64(symbolizer__set_debug_dirs(s, dir), 0, "two directories");
	if (!CHECK(child_start(&c, (char *[]){ exe, buildid, buildid, buildid, buildid, NULL }) ==
			   0,
		   "fixture child runs"))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	ip = child_addr(&c, "buildid_fix_lib_static") + 1;
	ret = symbolizer__user(s, c.pid, ip, buf, sizeof(buf));
	CHECK(ret == 0 && !strcmp(buf, "fix_lib_static"),
	      "stripped library, static function named from DIR/.build-id/57/...debug (got \"%s\")",
	      buf);
	check_frames(s, c.pid, child_addr(&c, "fix_inl_pc") - 1, 8,
		     "fix_inl_outer;fix_inl_mid_[i];fix_inl_inner_[i]", "inlined frames too");
out:
	child_stop(&c);
	symbolizer__free(s);
}

/* The value of symbol @name in the .symtab of @path, 0 if none. */
static unsigned long long symtab_value(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned long long value = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !value && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && gelf_getsym(data, i, &sym); i++) {
			const char *n = elf_strptr(elf, sh.sh_link, sym.st_name);

			if (n && !strcmp(n, name)) {
				value = sym.st_value;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return value;
}

/* @ip of @pid falls back to "@base+0x..." (the file's own symbols do not name it). */
static void check_fallback_to(struct symbolizer *s, int pid, unsigned long long ip,
			      const char *base, const char *what)
{
	char buf[256], want[128];
	int ret = symbolizer__user(s, pid, ip, buf, sizeof(buf));

	snprintf(want, sizeof(want), "%s+0x", base);
	unit_report(ret == 1 && strstr(buf, want) == buf, "test_foreign_debug", buf,
		    "%s: falls back to %s... (got \"%s\", ret %d)", what, want, buf, ret);
}

/*
 * A debug file of another build (tests/symbolize.mk: -DWPFIX_OTHER_BUILD
 * moves every function) must not name frames: the .gnu_debuglink's CRC
 * tells it from the right one when the library has no build-id, the
 * build-id when it has one, also under DIR/.build-id/. The libraries go in
 * the fixture's debuglink, buildid and twin slots (only labels there).
 */
static void test_foreign_debug(void)
{
	char exe[600], stripped[600], crc[600], crcbad[600], bidbad[600], buildid[600];
	char own[600], other[600], tmpdir[] = "/tmp/wprof-test-XXXXXX", link[PATH_MAX], dir[256];
	struct symbolizer *s = symbolizer__new(), *s2 = symbolizer__new();
	struct symbolizer_stats st;
	struct child c = {};
	unsigned long long own_at, other_at;

	const struct {
		char *buf;
		const char *name;
	} paths[] = {
		{ exe, "wpfix" },
		{ stripped, "libwpfix-stripped.so" },
		{ crc, "libwpfix-crc.so" },
		{ crcbad, "libwpfix-crcbad.so" },
		{ bidbad, "libwpfix-bidbad.so" },
		{ buildid, "libwpfix-buildid.so" },
		{ own, "libwpfix-crc.debug" },
		{ other, "libwpfix-crcbad.debug" },
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		snprintf(paths[i].buf, 600, "%s/%s", fixture_dir, paths[i].name);
	/* the fixture is only a test if the other build's names are wrong here */
	own_at = symtab_value(own, "fix_lib_static");
	other_at = symtab_value(other, "fix_lib_static");
	if (!CHECK(own_at && other_at && own_at != other_at,
		   "fixture: fix_lib_static at 0x%llx in this build, 0x%llx in the other", own_at,
		   other_at))
		goto out;
	if (!CHECK(s && s2 && child_start(&c, (char *[]){ exe, stripped, stripped, crc, crcbad,
							 bidbad, NULL }) == 0,
		   "symbolizers, fixture child runs"))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	check_name(s, c.pid, child_addr(&c, "debuglink_fix_lib_static") + 1, "fix_lib_static",
		   "no build-id, debug file of the CRC in its .gnu_debuglink: named");
	check_fallback_to(s, c.pid, child_addr(&c, "buildid_fix_lib_static") + 1,
			  "libwpfix-crcbad.so", "no build-id, debug file of another CRC");
	check_name(s, c.pid, child_addr(&c, "buildid_fix_lib_work") + 1, "fix_lib_work",
		   "no build-id, debug file of another CRC: .dynsym still names");
	check_fallback_to(s, c.pid, child_addr(&c, "twin_fix_lib_static") + 1,
			  "libwpfix-bidbad.so", "debug file of another build-id");
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.debug_crc_mismatch, 1, "CRC mismatches counted");
	CHECK_EQ_U64(st.debug_build_id_mismatch, 1, "build-id mismatches counted");
	CHECK_EQ_U64(st.debug_too_big, 0, "none too big to check");
	CHECK(st.debug_refused_path && strstr(st.debug_refused_path, "/libwpfix-") &&
		      strstr(st.debug_refused_path, "bad.debug"),
	      "the first refused debug file is named (%s)",
	      st.debug_refused_path ? st.debug_refused_path : "NULL");
	child_stop(&c);

	/* DIR/.build-id/57/70...03.debug that is another build's (build-id ...05) */
	if (!CHECK(mkdtemp(tmpdir) != NULL, "temporary directory"))
		goto out;
	snprintf(dir, sizeof(dir), "%s/.build-id", tmpdir);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/.build-id/57", tmpdir);
	mkdir(dir, 0755);
	/* libwpfix-buildid.so's build-id, FIX_BID_BUILDID of tests/symbolize.mk */
	snprintf(link, sizeof(link), "%s/%s.debug", dir, "70666978000000000000000000000000000003");
	snprintf(other, sizeof(other), "%s/libwpfix-bidbad.debug", fixture_dir);
	if (!CHECK(copy_file(other, link) == 0 && symbolizer__set_debug_dirs(s2, tmpdir) == 0,
		   "%s, a debug file of another build-id", link))
		goto cleanup;
	if (!CHECK(child_start(&c, (char *[]){ exe, buildid, buildid, buildid, buildid, NULL }) ==
			   0,
		   "fixture child runs"))
		goto cleanup;
	CHECK_EQ_S64(symbolizer__add_pid(s2, c.pid), 0, "add_pid");
	check_fallback_to(s2, c.pid, child_addr(&c, "buildid_fix_lib_static") + 1,
			  "libwpfix-buildid.so", "DIR/.build-id/ file of another build-id");
	symbolizer__stats(s2, &st);
	CHECK_EQ_U64(st.debug_build_id_mismatch, 1, "build-id mismatch under .build-id/ counted");
	child_stop(&c);
cleanup:
	unlink(link);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/.build-id", tmpdir);
	rmdir(dir);
	rmdir(tmpdir);
out:
	child_stop(&c);
	symbolizer__free(s);
	symbolizer__free(s2);
}

/* The unnamed frame of @path in @u (@n of them), or NULL. */
static const struct symbolizer_unnamed *unnamed_of(const struct symbolizer_unnamed *u, int n,
						   const char *path)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(u[i].path, path))
			return &u[i];
	return NULL;
}

/*
 * Frames named by file offset are counted per file, one per
 * symbolizer__user() call, cache hits included: what the summary's line
 * about missing symbols reports. A stripped library (only .dynsym) and one
 * whose debug file is not found both lack a full symbol table; a frame
 * named through a debug file, or named at all, counts nothing.
 */
static void test_unnamed(void)
{
	char exe[600], stripped[600], debuglink[600], buildid[600], buf[256];
	char rstripped[PATH_MAX], rbuildid[PATH_MAX];
	struct symbolizer *s = symbolizer__new();
	const struct symbolizer_unnamed *x;
	struct symbolizer_unnamed *u = NULL;
	struct child c = {};
	unsigned long long ip;
	int n;

	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	snprintf(stripped, sizeof(stripped), "%s/libwpfix-stripped.so", fixture_dir);
	snprintf(debuglink, sizeof(debuglink), "%s/libwpfix-debuglink.so", fixture_dir);
	snprintf(buildid, sizeof(buildid), "%s/libwpfix-buildid.so", fixture_dir);
	if (!CHECK(s && realpath(stripped, rstripped) && realpath(buildid, rbuildid),
		   "symbolizer, fixtures"))
		goto out;
	n = symbolizer__unnamed(s, &u);
	CHECK(n == 0 && !u, "nothing unnamed before any lookup (%d)", n);
	free(u);
	/* the same library under the deleted role: a copy is named, not counted */
	if (!CHECK(child_start(&c, (char *[]){ exe, stripped, stripped, debuglink, buildid,
					       NULL }) == 0,
		   "fixture child runs"))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	ip = child_addr(&c, "stripped_fix_lib_static") + 1;
	for (int i = 0; i < 3; i++)
		CHECK_EQ_S64(symbolizer__user(s, c.pid, ip, buf, sizeof(buf)), 1,
			     "stripped library, static function, lookup %d: fallback %s", i, buf);
	CHECK_EQ_S64(symbolizer__user_frames(s, c.pid, ip, false, (char (*)[256])buf, 1), 1,
		     "symbolizer__user_frames of it: one name, not counted");
	CHECK_EQ_S64(symbolizer__user(s, c.pid, child_addr(&c, "stripped_fix_lib_work") + 1, buf,
				      sizeof(buf)),
		     0, "stripped library, exported function: named (%s)", buf);
	CHECK_EQ_S64(symbolizer__user(s, c.pid, child_addr(&c, "debuglink_fix_lib_static") + 1,
				      buf, sizeof(buf)),
		     0, "static function named through .gnu_debuglink (%s)", buf);
	ip = child_addr(&c, "buildid_fix_lib_static") + 1;
	CHECK_EQ_S64(symbolizer__user(s, c.pid, ip, buf, sizeof(buf)), 1,
		     "debug file out of reach: fallback %s", buf);
	check_fallback(s, c.pid, 0x1000, "[unmapped]", "unmapped: no file's");

	n = symbolizer__unnamed(s, &u);
	CHECK_EQ_S64(n, 2, "two files had unnamed frames");
	x = u ? unnamed_of(u, n, rstripped) : NULL;
	if (CHECK(x != NULL, "%s is one", rstripped)) {
		CHECK_EQ_U64(x->frames, 3, "its frames: 3 symbolizer__user() calls");
		CHECK(!x->has_symtab && !x->unreadable, "read, without a full symbol table");
	}
	x = u ? unnamed_of(u, n, rbuildid) : NULL;
	if (CHECK(x != NULL, "%s is one", rbuildid)) {
		CHECK_EQ_U64(x->frames, 1, "its frames");
		CHECK(!x->has_symtab && !x->unreadable, "read, without a full symbol table");
	}
	CHECK(n >= 1 && u && !strcmp(u[0].path, rstripped), "most frames first");
	free(u);
out:
	child_stop(&c);
	symbolizer__free(s);
}

/* Frames of inlined functions, from DWARF. */
static void test_inline(void)
{
	char exe[600], nopie[600], names[4][SYMBOLIZER_NAME_LEN], want[64];
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	struct child c = {}, c2 = {};
	unsigned long long ip;
	int n;

	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	snprintf(nopie, sizeof(nopie), "%s/wpfix-nopie", fixture_dir);
	if (!CHECK(s && child_start(&c, (char *[]){ exe, NULL }) == 0 &&
			   child_start(&c2, (char *[]){ nopie, NULL }) == 0,
		   "fixture children run"))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	CHECK_EQ_S64(symbolizer__add_pid(s, c2.pid), 0, "add_pid of the non-PIE child");
	ip = child_addr(&c, "fix_inl_pc") - 1;
	check_frames(s, c.pid, ip, 8, "fix_inl_outer;fix_inl_mid_[i];fix_inl_inner_[i]",
		     "two nested inlined calls");
	check_frames(s, c.pid, ip, 2, "fix_inl_outer;fix_inl_mid_[i]",
		     "room for two: the innermost dropped");
	check_frames(s, c.pid, ip, 1, "fix_inl_outer", "room for one: the real function");
	n = symbolizer__user_frames(s, c.pid, ip, false, names, 4);
	CHECK(n == 1 && !strcmp(names[0], "fix_inl_outer"),
	      "inlines not asked for: one name (%d, \"%s\")", n, n > 0 ? names[0] : "");
	check_frames(s, c2.pid, child_addr(&c2, "fix_inl_pc") - 1, 8,
		     "fix_inl_outer;fix_inl_mid_[i];fix_inl_inner_[i]", "non-PIE executable");
	check_frames(s, c.pid, child_addr(&c, "fix_lib_work") + 1, 8, "fix_lib_work",
		     "no inlined call there: one name");
	snprintf(want, sizeof(want), "[anon]+0x%llx", child_addr(&c, "anon"));
	check_frames(s, c.pid, child_addr(&c, "anon"), 8, want, "fallback: one name");
	CHECK_EQ_S64(symbolizer__user_frames(s, c.pid, ip, true, names, 0), -EINVAL,
		     "no room: -EINVAL");
	CHECK_EQ_S64(symbolizer__user_frames(s, c.pid, ip, true, NULL, 4), -EINVAL,
		     "NULL names: -EINVAL");
	child_stop(&c);
	check_frames(s, c.pid, ip, 8, "fix_inl_outer;fix_inl_mid_[i];fix_inl_inner_[i]",
		     "exited (cached)");
	check_frames(s, c.pid, ip - 1, 8, "fix_inl_outer;fix_inl_mid_[i];fix_inl_inner_[i]",
		     "exited, DWARF read through the fd kept");
	symbolizer__stats(s, &st);
	CHECK(st.user_inlined >= 8, "inlined frames counted (%llu)",
	      (unsigned long long)st.user_inlined);
out:
	child_stop(&c);
	child_stop(&c2);
	symbolizer__free(s);
}

/* An executable replaced (renamed over) after it started: map_files still has the original. */
static void test_replaced_exe(void)
{
	char dir[] = "/tmp/wprof-repl-XXXXXX", exe[600], lib[600], from[600], other[600];
	char buf[256];
	struct symbolizer *s = symbolizer__new();
	struct child c = {};
	unsigned long long ip;
	int ret;

	if (!CHECK(s && mkdtemp(dir), "symbolizer, temporary directory"))
		goto out;
	snprintf(exe, sizeof(exe), "%s/wpfix", dir);
	snprintf(lib, sizeof(lib), "%s/libwpfix.so", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(from, sizeof(from), "%s/wpfix", fixture_dir);
	CHECK(copy_file(from, exe) == 0, "copy of wpfix");
	snprintf(from, sizeof(from), "%s/libwpfix.so", fixture_dir);
	CHECK(copy_file(from, lib) == 0, "copy of libwpfix.so");
	snprintf(from, sizeof(from), "%s/wpfix-nopie", fixture_dir);
	CHECK(copy_file(from, other) == 0, "another program");
	if (!CHECK(child_start(&c, (char *[]){ exe, NULL }) == 0, "copy runs"))
		goto out;
	CHECK(rename(other, exe) == 0, "another program renamed over the running one");
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	ip = child_addr(&c, "fix_exe_static") + 1;
	ret = symbolizer__user(s, c.pid, ip, buf, sizeof(buf));
	if (geteuid() == 0)
		CHECK(ret == 0 && !strcmp(buf, "fix_exe_static"),
		      "replaced executable named through map_files (got \"%s\")", buf);
	else
		CHECK(ret == 1 && !strncmp(buf, "wpfix+0x", 8),
		      "replaced executable, not root: never named from the new file (got \"%s\")",
		      buf);
out:
	child_stop(&c);
	unlink(exe);
	unlink(lib);
	unlink(other);
	rmdir(dir);
	symbolizer__free(s);
}

/*
 * A forked child runs its parent's code until it execs. One gone before its
 * maps were read (a pid never added) is named by its parent's; one that
 * exec'd first by its own for its new program's code, and by its parent's
 * for what it ran before.
 */
static void test_inherit(void)
{
	struct symbolizer *s = symbolizer__new();
	unsigned long long own = (unsigned long)test_inherit + 1;
	__u64 start = 0, self_start = 0, before;
	struct child c = {};
	char want[64], exe[600];

	if (!CHECK(s != NULL, "symbolizer__new"))
		return;
	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	CHECK(procmaps__start_time(getpid(), &self_start) == 0, "our start");
	before = now_ns();
	CHECK_EQ_S64(symbolizer__add_pid(s, getpid()), 0, "add_pid of ourselves, the parent");
	snprintf(want, sizeof(want), "[unknown-pid-%d]+0x%llx", 0x7ffffff0, own);
	check_fallback(s, 0x7ffffff0, own, want, "a gone child, before");
	CHECK_EQ_S64(symbolizer__inherit(s, 0x7ffffff0, 1, getpid(), self_start, before), 0,
		     "inherit, forked before the parent's maps were read");
	check_fallback(s, 0x7ffffff0, own, want, "not named: the parent may have exec'd since");
	CHECK_EQ_S64(symbolizer__inherit(s, 0x7ffffff0, 1, getpid(), self_start + 1, now_ns()), 0,
		     "inherit from another process of the parent's pid");
	check_fallback(s, 0x7ffffff0, own, want, "not named: not its parent");
	CHECK_EQ_S64(symbolizer__inherit(s, 0x7ffffff0, 1, getpid(), self_start, now_ns()), 0,
		     "inherit");
	check_name(s, 0x7ffffff0, own, "test_inherit", "a gone child, by its parent's maps");
	CHECK_EQ_S64(symbolizer__inherit(s, 0x7ffffff1, 1, 0x7ffffff2, 1, now_ns()), 0,
		     "inherit from a parent never added: nothing");
	snprintf(want, sizeof(want), "[unknown-pid-%d]+0x%llx", 0x7ffffff1, own);
	check_fallback(s, 0x7ffffff1, own, want, "its child stays unknown");

	if (!CHECK(child_start(&c, (char *[]){ exe, NULL }) == 0,
		   "a child that exec'd another program"))
		goto out;
	CHECK(procmaps__start_time(c.pid, &start) == 0, "its start");
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid of it: its own maps");
	CHECK_EQ_S64(symbolizer__inherit(s, c.pid, start - 1, getpid(), self_start, now_ns()), 0,
		     "inherit for an earlier process of its pid");
	check_fallback(s, c.pid, own, "[unmapped]", "not named: it is a later process");
	CHECK_EQ_S64(symbolizer__inherit(s, c.pid, start, getpid(), self_start, now_ns()), 0,
		     "inherit");
	check_name(s, c.pid, child_addr(&c, "fix_exe_static") + 1, "fix_exe_static",
		   "its own code, by its own maps");
	check_name(s, c.pid, own, "test_inherit", "what it ran before the exec, by its parent's");
	CHECK_EQ_S64(symbolizer__inherit(s, c.pid, start, getpid(), self_start, now_ns()), 0,
		     "inherit again: no change");
	check_name(s, c.pid, own, "test_inherit", "still");
out:
	child_stop(&c);
	symbolizer__free(s);
}

/*
 * Files wait to be indexed holding an fd; past a quarter of RLIMIT_NOFILE
 * a symbolizer indexes new ones at once and closes them. The benchmark's
 * driver maps 20 libraries and more.
 */
static void test_fd_budget(void)
{
	struct rlimit old, low;
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct child c = {};
	char driver[600], what[64];
	int i;

	snprintf(driver, sizeof(driver), "%s/sbdriver", fixture_dir);
	if (!CHECK(!getrlimit(RLIMIT_NOFILE, &old), "RLIMIT_NOFILE"))
		return;
	low = old;
	low.rlim_cur = 64;
	if (!setrlimit(RLIMIT_NOFILE, &low)) {
		s = symbolizer__new(); /* a budget of 16 files */
		setrlimit(RLIMIT_NOFILE, &old);
	}
	if (!CHECK(s && child_start(&c, (char *[]){ driver, fixture_dir, NULL }) == 0,
		   "symbolizer with 64 fds, driver %s runs", driver))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	symbolizer__stats(s, &st);
	CHECK(st.files > 20 && st.files_closed_early >= st.files - 16,
	      "%llu of %llu files indexed at once and closed",
	      (unsigned long long)st.files_closed_early, (unsigned long long)st.files);
	for (i = 0; i < 40; i += 13) {
		snprintf(what, sizeof(what), "sb0_f%d", i);
		check_name(s, c.pid, child_addr(&c, what) + 7, what, "past the budget, still named");
	}
out:
	child_stop(&c);
	symbolizer__free(s);
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
	/* A wedged child must not hang the test run. */
	alarm(120);
	fix_init();
	test_kallsyms_file();
	test_kernel();
	test_user();
	test_debug_dirs();
	test_foreign_debug();
	test_unnamed();
	test_inline();
	test_replaced_exe();
	test_inherit();
	test_fd_budget();
	return unit_done();
}
