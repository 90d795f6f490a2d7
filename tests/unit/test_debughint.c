// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/debughint.c: reading `dpkg-query -S` lines, naming debug packages, the
 * merged-/usr alias of a path, and (where dpkg-query runs) the owner of
 * libc and of a file no package owns.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "debughint.h"
#include "unit.h"
#include "util.h"

static void test_parse_owner(void)
{
	static const struct {
		const char *line, *pkg, *path;
	} cases[] = {
		{ "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6", "libc6",
		  "/lib/x86_64-linux-gnu/libc.so.6" },
		{ "coreutils: /usr/bin/ls\n", "coreutils", "/usr/bin/ls" },
		{ "libstdc++6:arm64: /usr/lib/aarch64-linux-gnu/libstdc++.so.6", "libstdc++6",
		  "/usr/lib/aarch64-linux-gnu/libstdc++.so.6" },
		{ "libfoo1:amd64, libfoo-dev:amd64: /usr/lib/x", "libfoo1", "/usr/lib/x" },
		{ "dash: /bin/sh", "dash", "/bin/sh" },
		{ "diversion by dash from: /bin/sh", NULL, NULL },
		{ "diversion by dash to: /bin/sh.distrib", NULL, NULL },
		{ "dpkg-query: no path found matching pattern /x", NULL, NULL },
		{ ": /x", NULL, NULL },
		{ "", NULL, NULL },
	};
	char pkg[DEBUGHINT_PKG_LEN], path[256];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool ok = debughint__parse_owner(cases[i].line, pkg, sizeof(pkg), path,
						 sizeof(path));

		if (!cases[i].pkg) {
			CHECK(!ok, "no owner in '%s'", cases[i].line);
			continue;
		}
		CHECK(ok && !strcmp(pkg, cases[i].pkg) && !strcmp(path, cases[i].path),
		      "'%s': %s owns %s (got %s, %s)", cases[i].line, cases[i].pkg, cases[i].path,
		      ok ? pkg : "-", ok ? path : "-");
	}
}

static void test_names(void)
{
	char buf[DEBUGHINT_PKG_LEN + 16];

	debughint__dbg_package("libc6", buf, sizeof(buf));
	CHECK_STREQ(buf, "libc6-dbg", "glibc's debug package");
	debughint__dbg_package("libstdc++6", buf, sizeof(buf));
	CHECK_STREQ(buf, "libstdc++6-dbgsym", "others: PKG-dbgsym");
	CHECK(debughint__usr_alias("/usr/lib/x86_64-linux-gnu/libc.so.6", buf, sizeof(buf)) &&
		      !strcmp(buf, "/lib/x86_64-linux-gnu/libc.so.6"),
	      "/usr/lib/... is also /lib/... (%s)", buf);
	CHECK(debughint__usr_alias("/bin/bash", buf, sizeof(buf)) && !strcmp(buf, "/usr/bin/bash"),
	      "/bin/... is also /usr/bin/... (%s)", buf);
	CHECK(debughint__usr_alias("/lib64/ld-linux-x86-64.so.2", buf, sizeof(buf)) &&
		      !strcmp(buf, "/usr/lib64/ld-linux-x86-64.so.2"),
	      "/lib64 too (%s)", buf);
	CHECK(!debughint__usr_alias("/usr/local/lib/libx.so", buf, sizeof(buf)),
	      "/usr/local has no other name");
	CHECK(!debughint__usr_alias("/usr/libexec/x", buf, sizeof(buf)),
	      "/usr/libexec is not /usr/lib");
	CHECK(!debughint__usr_alias("/opt/x", buf, sizeof(buf)), "/opt has no other name");
}

/* The real dpkg database: libc's owner under either of its names. */
static void test_owners(void)
{
	const char *paths[3] = { NULL, "/nonexistent/wprof-test.so", "/usr/bin/env" };
	char pkgs[3][DEBUGHINT_PKG_LEN];
	char libc[256];
	FILE *f;
	int err;

	/* the libc this test runs with, as its mapping names it */
	f = fopen("/proc/self/maps", "r");
	libc[0] = '\0';
	while (f && fscanf(f, "%*s %*s %*s %*s %*s%*[ ]%255[^\n]\n", libc) >= 0)
		if (strstr(libc, "/libc.so.6"))
			break;
	if (f)
		fclose(f);
	if (!strstr(libc, "/libc.so.6") || access("/var/lib/dpkg/status", R_OK)) {
		fprintf(stderr, "skip test_owners: not a Debian system with glibc\n");
		return;
	}
	paths[0] = libc;
	err = debughint__owners(paths, 3, pkgs);
	if (err == -ENOENT) {
		fprintf(stderr, "skip test_owners: dpkg-query cannot be run\n");
		return;
	}
	CHECK_EQ_S64(err, 0, "dpkg-query ran");
	CHECK_STREQ(pkgs[0], "libc6", "%s belongs to libc6", libc);
	CHECK_STREQ(pkgs[1], "", "no package owns %s", paths[1]);
	CHECK_STREQ(pkgs[2], "coreutils", "/usr/bin/env (dpkg may list /bin/env)");
}

int main(void)
{
	test_parse_owner();
	test_names();
	test_owners();
	return unit_done();
}
