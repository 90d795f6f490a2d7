// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the symbolizer on JIT code (src/perfmap.c: the fixture
 * wpjit names an anonymous executable region in /tmp/perf-PID.map) and on
 * processes in other mount and pid namespaces, whose files and perf maps
 * are only reachable through /proc/PID/root. Tests that need root to enter
 * namespaces or to own files as someone else are skipped otherwise, with
 * the reason on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "procmaps.h"
#include "symbolize.h"
#include "unit.h"
#include "../fixtures/fixchild.h"

#define OTHER_UID 12345

static bool skip_unless_root(const char *test, const char *why)
{
	if (geteuid() == 0)
		return false;
	fprintf(stderr, "skip %s: needs root (%s)\n", test, why);
	return true;
}

static void map_path(char *buf, size_t size, int pid)
{
	snprintf(buf, size, "/tmp/perf-%d.map", pid);
}

static bool start_jit(struct child *c, char *arg)
{
	char exe[600];

	snprintf(exe, sizeof(exe), "%s/wpjit", fixture_dir);
	return child_start(c, (char *[]){ exe, arg, NULL }) == 0 && child_addr(c, "region");
}

static void test_perfmap(void)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	char path[64], want[64], buf[256], names[2][SYMBOLIZER_NAME_LEN];
	unsigned long long r;
	struct child c = {};
	FILE *f;
	int n;

	if (!CHECK(s && start_jit(&c, NULL), "JIT fixture runs"))
		goto out;
	r = child_addr(&c, "region");
	map_path(path, sizeof(path), c.pid);
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	check_name(s, c.pid, r + 0x10, "jit_one_[j]", "JIT function");
	check_name(s, c.pid, r, "jit_one_[j]", "its first byte");
	check_name(s, c.pid, r + 0x7f, "jit two with spaces_[j]", "size in 0x hex, name with spaces");
	check_name(s, c.pid, r + 0x118, "new_small_[j]", "overlap: the later line wins");
	check_name(s, c.pid, r + 0x150, "old_big_[j]", "overlap: the older one elsewhere");
	check_name(s, c.pid, r + 0x208, "reused_new_[j]", "same range twice: the later line");
	snprintf(want, sizeof(want), "[anon]+0x%llx", r + 0x308);
	check_fallback(s, c.pid, r + 0x308, want, "a half-written line is not read");
	snprintf(want, sizeof(want), "[anon]+0x%llx", r + 0x800);
	check_fallback(s, c.pid, r + 0x800, want, "JIT code the map does not name");
	CHECK(symbolizer__user(s, c.pid, r + 0x10, buf, 8) == 0 && !strcmp(buf, "jit_[j]"),
	      "truncated to fit, the suffix kept (got \"%s\")", buf);
	n = symbolizer__user_frames(s, c.pid, r + 0x10, true, names, 2);
	CHECK(n == 1 && !strcmp(names[0], "jit_one_[j]"), "frames of JIT code: one (%d)", n);

	kill(c.pid, SIGUSR1);
	CHECK(child_read(&c, "grown") == 0, "the JIT wrote more");
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid again: the map is read again");
	check_name(s, c.pid, r + 0x308, "half_written_[j]", "the line completed since");
	check_name(s, c.pid, r + 0x408, "jit_three_[j]", "a function added since");
	child_stop(&c);

	/* The map outlives the process; names added late are read on the first miss. */
	f = fopen(path, "a");
	CHECK(f && fprintf(f, "%llx 10 after_exit\n", r + 0x2000) > 0, "appended to %s", path);
	if (f)
		fclose(f);
	check_name(s, c.pid, r + 0x2008, "after_exit_[j]", "exited, address in no mapping");
	check_name(s, c.pid, r + 0x10, "jit_one_[j]", "exited, cached");
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.jit_maps, 1, "one perf map read");
	CHECK(st.user_jit >= 10, "JIT names counted (%llu)", (unsigned long long)st.user_jit);
	CHECK_EQ_U64(st.jit_untrusted, 0, "none ignored");
out:
	child_stop(&c);
	if (c.pid > 0) {
		map_path(path, sizeof(path), c.pid);
		unlink(path);
	}
	symbolizer__free(s);
}

/* A map first read after its process exited: found by pid in our /tmp. */
static void test_perfmap_after_exit(void)
{
	char path[64], aside[80], want[64];
	struct symbolizer *s = symbolizer__new();
	struct child c = {};
	unsigned long long r;

	if (!CHECK(s && start_jit(&c, NULL), "JIT fixture runs"))
		goto out;
	r = child_addr(&c, "region");
	map_path(path, sizeof(path), c.pid);
	snprintf(aside, sizeof(aside), "%s.aside", path);
	CHECK(rename(path, aside) == 0, "map moved aside");
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid: no map yet");
	child_stop(&c);
	CHECK(rename(aside, path) == 0, "map back after the exit");
	check_name(s, c.pid, r + 0x10, "jit_one_[j]", "exited: map read from /tmp by pid");
	snprintf(want, sizeof(want), "[anon]+0x%llx", r + 0x800);
	check_fallback(s, c.pid, r + 0x800, want, "exited: an address the map does not name");
out:
	child_stop(&c);
	if (c.pid > 0) {
		map_path(path, sizeof(path), c.pid);
		unlink(path);
		snprintf(aside, sizeof(aside), "%s.aside", path);
		unlink(aside);
	}
	symbolizer__free(s);
}

/* A perf map that is a symlink, or belongs to someone else, is not read. */
static void test_perfmap_untrusted(void)
{
	char path[64], copy[] = "/tmp/wprof-jitmap-XXXXXX", want[64];
	struct symbolizer *s = symbolizer__new(), *s2 = symbolizer__new();
	struct symbolizer_stats st;
	struct child c = {};
	unsigned long long r;
	int fd = -1;

	if (!CHECK(s && s2 && start_jit(&c, NULL), "JIT fixture runs"))
		goto out;
	r = child_addr(&c, "region");
	map_path(path, sizeof(path), c.pid);
	snprintf(want, sizeof(want), "[anon]+0x%llx", r + 0x10);
	/* Same content, but reached through a symlink. */
	fd = mkstemp(copy);
	if (!CHECK(fd >= 0 && rename(path, copy) == 0 && symlink(copy, path) == 0,
		   "map replaced by a symlink to it"))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	check_fallback(s, c.pid, r + 0x10, want, "symlinked map ignored");
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.jit_untrusted, 1, "ignored map counted");
	if (skip_unless_root(__func__, "chown to another uid"))
		goto out;
	unlink(path);
	CHECK(rename(copy, path) == 0 && chown(path, OTHER_UID, OTHER_UID) == 0,
	      "map back, owned by uid %d", OTHER_UID);
	CHECK_EQ_S64(symbolizer__add_pid(s2, c.pid), 0, "add_pid");
	check_fallback(s2, c.pid, r + 0x10, want, "map of another owner ignored");
	CHECK(chown(path, 0, 0) == 0, "map owned by root");
	CHECK_EQ_S64(symbolizer__add_pid(s2, c.pid), 0, "add_pid again");
	check_name(s2, c.pid, r + 0x10, "jit_one_[j]", "map of root trusted");
out:
	child_stop(&c);
	if (fd >= 0)
		close(fd);
	unlink(copy);
	if (c.pid > 0) {
		map_path(path, sizeof(path), c.pid);
		unlink(path);
	}
	symbolizer__free(s);
	symbolizer__free(s2);
}

/* A JIT in its own mount and pid namespaces: /proc/PID/root/tmp/perf-1.map. */
static void test_perfmap_namespaces(void)
{
	struct symbolizer *s = symbolizer__new();
	struct child c = {};
	unsigned long long r;
	int pid;

	if (skip_unless_root(__func__, "unshare(CLONE_NEWNS | CLONE_NEWPID)"))
		goto out;
	if (!CHECK(s && start_jit(&c, "--ns") && child_addr(&c, "pid"),
		   "JIT fixture runs in new namespaces"))
		goto out;
	pid = child_addr(&c, "pid");
	r = child_addr(&c, "region");
	CHECK_EQ_S64(symbolizer__add_pid(s, pid), 0, "add_pid of %d (pid 1 inside)", pid);
	check_name(s, pid, r + 0x10, "jit_one_[j]", "JIT function, map in the process's /tmp");
	kill(pid, SIGKILL);
	child_stop(&c);
	check_name(s, pid, r + 0x50, "jit two with spaces_[j]", "exited: the map read before");
out:
	child_stop(&c);
	symbolizer__free(s);
}

struct ns_dir {
	const char *dir, *exe, *lib;
};

/* In the child: a mount namespace where @dir is a tmpfs holding copies of the fixture. */
static int enter_ns_dir(void *arg)
{
	const struct ns_dir *nd = arg;
	char to[600];

	if (unshare(CLONE_NEWNS) || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", nd->dir, "tmpfs", 0, "mode=0755"))
		return -1;
	snprintf(to, sizeof(to), "%s/wpfix", nd->dir);
	if (copy_file(nd->exe, to))
		return -1;
	snprintf(to, sizeof(to), "%s/libwpfix.so", nd->dir);
	return copy_file(nd->lib, to);
}

/* A program that exists only in its own mount namespace. */
static void test_mount_namespace(void)
{
	static const char *const funcs[] = { "main", "fix_exe_static", "fix_lib_work",
					     "fix_lib_static" };
	char dir[] = "/tmp/wprof-ns-XXXXXX", exe[600], lib[600], inside[600], what[128];
	struct symbolizer *s = symbolizer__new();
	struct proc_maps maps = {};
	struct proc_map fake;
	const struct proc_map *m;
	struct ns_dir nd = { dir, exe, lib };
	struct child c = {};
	size_t i;
	int fd;

	if (skip_unless_root(__func__, "unshare(CLONE_NEWNS) and mount"))
		goto out;
	snprintf(exe, sizeof(exe), "%s/wpfix", fixture_dir);
	snprintf(lib, sizeof(lib), "%s/libwpfix.so", fixture_dir);
	if (!CHECK(s && mkdtemp(dir), "symbolizer, directory %s", dir))
		goto out;
	snprintf(inside, sizeof(inside), "%s/wpfix", dir);
	if (!CHECK(child_start_with(&c, (char *[]){ inside, NULL }, enter_ns_dir, &nd) == 0,
		   "fixture runs from %s in its own mount namespace", inside))
		goto out;
	CHECK(access(inside, F_OK) != 0, "%s does not exist here", inside);
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		snprintf(what, sizeof(what), "other mount namespace, %s", funcs[i]);
		check_name(s, c.pid, child_addr(&c, funcs[i]) + 1, funcs[i], what);
	}
	/* Without map_files (a mapping it does not list): the path in the process's root. */
	m = procmaps__read(c.pid, &maps) ? NULL
					 : procmaps__find(&maps, child_addr(&c, "main"));
	if (CHECK(m && m->path && !strcmp(m->path, inside), "mapping of %s", inside)) {
		fake = *m;
		fake.start = 0x1000;
		fake.end = 0x2000;
		fd = procmaps__open_file(c.pid, &fake);
		CHECK(fd >= 0, "opened through /proc/PID/root (%d)", fd);
		if (fd >= 0)
			close(fd);
	}
	child_stop(&c);
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		snprintf(what, sizeof(what), "exited, other mount namespace, %s", funcs[i]);
		check_name(s, c.pid, child_addr(&c, funcs[i]) + 2, funcs[i], what);
	}
out:
	child_stop(&c);
	procmaps__free(&maps);
	rmdir(dir);
	symbolizer__free(s);
}

int main(void)
{
	alarm(60);
	fix_init();
	test_perfmap();
	test_perfmap_after_exit();
	test_perfmap_untrusted();
	test_perfmap_namespaces();
	test_mount_namespace();
	return unit_done();
}
