// SPDX-License-Identifier: GPL-2.0-only
/*
 * The summary's last lines: what would name the frames named by file offset
 * (debug packages, debuginfod, a JIT's perf map), and the debug files refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "debughint.h"
#include "safestr.h"
#include "zsects.h"

/* Files named in the line; the rest are summed up. */
#define MAX_SHOWN 5
/* dpkg-query's answer for MAX_SHOWN paths is a few lines: more is not its answer. */
#define MAX_OUTPUT (64 * 1024)

extern char **environ;

bool debughint__parse_owner(const char *line, char *pkg, size_t pkg_size, char *path,
			    size_t path_size)
{
	const char *sep = strstr(line, ": /"), *end;
	size_t len;

	if (!sep || sep == line)
		return false;
	/* "diversion by PKG from: /path" and the like: no owner; "pkg1, pkg2" is */
	for (const char *c = line; c < sep; c++)
		if (*c == ' ' && (c == line || c[-1] != ','))
			return false;
	/* the first of "pkg1, pkg2" */
	end = memchr(line, ',', sep - line);
	if (!end)
		end = sep;
	/* "libc6:amd64" -> "libc6": the debug package has the same architecture */
	len = end - line;
	if (memchr(line, ':', len))
		len = (const char *)memchr(line, ':', len) - line;
	if (!len || len >= pkg_size)
		return false;
	memcpy(pkg, line, len);
	pkg[len] = '\0';
	snprintf(path, path_size, "%s", sep + 2);
	path[strcspn(path, "\n")] = '\0';
	return true;
}

void debughint__dbg_package(const char *pkg, char *buf, size_t size)
{
	/* glibc ships its own debug package; the others come from the -dbgsym archive */
	if (!strcmp(pkg, "libc6"))
		snprintf(buf, size, "libc6-dbg");
	else
		snprintf(buf, size, "%.*s-dbgsym", DEBUGHINT_PKG_LEN - 1, pkg);
}

bool debughint__usr_alias(const char *path, char *buf, size_t size)
{
	static const char *const dirs[] = { "/lib/", "/lib32/", "/lib64/", "/libx32/",
					    "/bin/", "/sbin/" };
	int n;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t len = strlen(dirs[i]);

		if (!strncmp(path, "/usr", 4) && !strncmp(path + 4, dirs[i], len))
			n = snprintf(buf, size, "%s", path + 4);
		else if (!strncmp(path, dirs[i], len))
			n = snprintf(buf, size, "/usr%s", path);
		else
			continue;
		return n > 0 && (size_t)n < size;
	}
	return false;
}

/* Run argv with stdout into *out (NUL-terminated, malloc'd), stdin and stderr /dev/null. */
static int run(char *const argv[], char **out)
{
	posix_spawn_file_actions_t fa;
	size_t len = 0, cap = 4096;
	int pipefd[2], status, err;
	char *buf = malloc(cap);
	posix_spawnattr_t attr;
	sigset_t none, pipe_sig;
	pid_t pid = -1;
	ssize_t n;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		free(buf);
		return err;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* not what wprof blocks (SIGINT, SIGTERM) and ignores (SIGPIPE) */
	sigemptyset(&none);
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &pipe_sig);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	err = -posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		pid = -1;
	close(pipefd[1]);
	while (!err && (n = read(pipefd[0], buf + len, cap - len - 1)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		len += n;
		if (len + 1 == cap) {
			char *b = cap < MAX_OUTPUT ? realloc(buf, 2 * cap) : NULL;

			if (!b)
				break; /* the rest is not needed: the child gets EPIPE */
			buf = b;
			cap *= 2;
		}
	}
	close(pipefd[0]);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int debughint__owners(const char *const *paths, size_t n, char (*pkgs)[DEBUGHINT_PKG_LEN])
{
	char *argv[2 + 2 * MAX_SHOWN + 1] = { "dpkg-query", "-S" };
	char alias[MAX_SHOWN][4096], pkg[DEBUGHINT_PKG_LEN], path[4096];
	char *out, *line, *save = NULL;
	int argc = 2, err;

	if (n > MAX_SHOWN)
		n = MAX_SHOWN;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		pkgs[i][0] = '\0';
		argv[argc++] = (char *)paths[i];
		if (debughint__usr_alias(paths[i], alias[i], sizeof(alias[i])))
			argv[argc++] = alias[i];
		else
			alias[i][0] = '\0';
	}
	argv[argc] = NULL;
	/* it exits 1 when some path has no owner, and still prints the others' */
	err = run(argv, &out);
	if (err)
		return err;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!debughint__parse_owner(line, pkg, sizeof(pkg), path, sizeof(path)))
			continue;
		for (size_t i = 0; i < n; i++)
			if (!pkgs[i][0] && (!strcmp(path, paths[i]) || !strcmp(path, alias[i])))
				snprintf(pkgs[i], DEBUGHINT_PKG_LEN, "%s", pkg);
	}
	free(out);
	return 0;
}

/*
 * A file or package name, as a process mapped it or dpkg named it: safe text
 * (safestr.h), so that no name can end the hint's line or act on a terminal.
 */
static void put_name(FILE *f, const char *name)
{
	safestr__fput(f, name, strlen(name));
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/*
 * How the runtime of executable @path (by its base name) writes the perf
 * map (/tmp/perf-PID.map) that names its JIT code.
 */
static const char *jit_hint(const char *path)
{
	static const struct { const char *prefix, *hint; } runtimes[] = {
		{ "node", "start node with --perf-basic-prof" },
		{ "java", "run java with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, "
			  "or attach a perf-map agent" },
		{ "python3", "Python 3.12 and later: run it with -X perf" },
		{ "dotnet", "set DOTNET_PerfMapEnabled=1" }, /* where JIT code is anonymous */
		{ "ruby", "Ruby 3.3 and later with YJIT: run it with --yjit-perf" },
	};
	const char *base = base_name(path);

	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (!strncmp(base, runtimes[i].prefix, strlen(runtimes[i].prefix)))
			return runtimes[i].hint;
	return "its runtime's perf map, /tmp/perf-PID.map, would name them";
}

/* Debug files of another build, refused: which, and what would fix it. */
static void print_refused(const struct symbolizer *sym, FILE *f)
{
	struct symbolizer_stats ss;

	symbolizer__stats(sym, &ss);
	if (!ss.debug_build_id_mismatch && !ss.debug_crc_mismatch && !ss.debug_too_big)
		return;
	fprintf(f, "wprof: debug files refused as another build's (their names would be wrong): "
		"%llu build-id differs, %llu CRC differs from the .gnu_debuglink's, %llu too big "
		"to check; e.g. ", (unsigned long long)ss.debug_build_id_mismatch,
		(unsigned long long)ss.debug_crc_mismatch, (unsigned long long)ss.debug_too_big);
	put_name(f, ss.debug_refused_path ? ss.debug_refused_path : "?");
	fprintf(f, ": install the debug files of the installed build, or rebuild the program and "
		"its debug file together\n");
}

/* Files whose compressed sections were not read, and the first of them. */
static void print_inflate_refused(const struct symbolizer *sym, FILE *f)
{
	struct symbolizer_stats ss;

	symbolizer__stats(sym, &ss);
	if (!ss.inflate_refused)
		return;
	fprintf(f, "wprof: compressed sections not read, as they would inflate to over %d times "
		"their size or %llu MiB: %llu files, e.g. ", ZSECTS_RATIO, ZSECTS_MAX_BYTES >> 20,
		(unsigned long long)ss.inflate_refused);
	put_name(f, ss.inflate_refused_path ? ss.inflate_refused_path : "?");
	fprintf(f, " (their frames named without them)\n");
}

/* Files whose dwz alt file was missing or refused, and the first link's name. */
static void print_alt_refused(const struct symbolizer *sym, FILE *f)
{
	struct symbolizer_stats ss;

	symbolizer__stats(sym, &ss);
	if (!ss.alt_refused)
		return;
	fprintf(f, "wprof: dwz files missing or refused (not a readable regular file of the "
		"build linked to): %llu files without inlined calls, e.g. ",
		(unsigned long long)ss.alt_refused);
	put_name(f, ss.alt_refused_path ? ss.alt_refused_path : "?");
	fprintf(f, "\n");
}

void debughint__print(const struct symbolizer *sym, FILE *f)
{
	char pkgs[MAX_SHOWN][DEBUGHINT_PKG_LEN], dbg[DEBUGHINT_PKG_LEN + 16];
	const char *paths[MAX_SHOWN];
	struct symbolizer_unnamed *u;
	int n = symbolizer__unnamed(sym, &u), shown;
	bool dpkg, packaged = false;
	__u64 rest = 0;

	print_refused(sym, f);
	print_inflate_refused(sym, f);
	print_alt_refused(sym, f);
	if (n <= 0) {
		free(u);
		return;
	}
	shown = n < MAX_SHOWN ? n : MAX_SHOWN;
	for (int i = 0; i < shown; i++)
		paths[i] = u[i].path;
	/* without dpkg (not Debian) only the kind of help can be named */
	dpkg = !debughint__owners(paths, shown, pkgs);
	fprintf(f, "wprof: frames without symbol names, by file:");
	for (int i = 0; i < shown; i++) {
		fprintf(f, "%s ", i ? "," : "");
		put_name(f, base_name(u[i].path));
		fprintf(f, " %llu (", (unsigned long long)u[i].frames);
		if (u[i].jit && u[i].jit_mapped) {
			fprintf(f, "its JIT code, not in its perf map: the runtime left it out "
				"or wrote it after wprof last read it");
		} else if (u[i].jit) {
			fprintf(f, "its JIT code: %s", jit_hint(u[i].path));
		} else if (u[i].not_code) {
			fprintf(f, "addresses in its data, not code");
		} else if (u[i].unreadable) {
			put_name(f, u[i].path);
			fprintf(f, " could not be opened");
		} else if (u[i].has_symtab) {
			fprintf(f, "outside every function of its symbol table");
		} else if (dpkg && pkgs[i][0]) {
			debughint__dbg_package(pkgs[i], dbg, sizeof(dbg));
			fprintf(f, "from ");
			put_name(f, pkgs[i]);
			fprintf(f, ": install ");
			put_name(f, dbg);
			packaged = true;
		} else if (dpkg) {
			put_name(f, u[i].path);
			fprintf(f, " is in no package: build it with -g, unstripped");
		} else {
			put_name(f, u[i].path);
			fprintf(f, ": its debug symbols would name them");
		}
		fprintf(f, ")");
	}
	for (int i = shown; i < n; i++)
		rest += u[i].frames;
	if (n > shown)
		fprintf(f, ", %d more files with %llu frames", n - shown, (unsigned long long)rest);
	if (packaged && !getenv("DEBUGINFOD_URLS"))
		fprintf(f, "; or, for packaged files, set DEBUGINFOD_URLS=%s",
			DEBUGHINT_DEBUGINFOD);
	fprintf(f, "\n");
	free(u);
}
