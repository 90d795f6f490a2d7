/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What would name the frames the symbolizer could only name by file offset
 * ("libc.so.6+0x891f4"): the Debian package that owns the file, found with
 * `dpkg-query -S`, and its debug package (libc6-dbg for libc6, else
 * PKG-dbgsym from the debug archive), or debuginfod. Said in one line of
 * the summary, only when there are such frames.
 */
#ifndef WPROF_DEBUGHINT_H
#define WPROF_DEBUGHINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "symbolize.h"

#define DEBUGHINT_PKG_LEN 128
#define DEBUGHINT_DEBUGINFOD "https://debuginfod.debian.net"

/*
 * One line of `dpkg-query -S` output, "pkg[:arch][, pkg2...]: /path": the
 * first package without its architecture into @pkg and the path into
 * @path. False for other lines (diversions, messages).
 */
bool debughint__parse_owner(const char *line, char *pkg, size_t pkg_size, char *path,
			    size_t path_size);

/* The package with the debug symbols of binary package @pkg. */
void debughint__dbg_package(const char *pkg, char *buf, size_t size);

/*
 * The other name of @path on a merged-/usr system (/usr/lib/x <-> /lib/x,
 * also bin, sbin, lib32, lib64, libx32): the mapping shows one and dpkg may
 * list the other. False when @path has no other name.
 */
bool debughint__usr_alias(const char *path, char *buf, size_t size);

/*
 * The packages that own @paths (or their /usr alias), by one run of
 * `dpkg-query -S`: pkgs[i] is "" for a path no package owns. 0, -ENOENT
 * when dpkg-query cannot be run, or -errno.
 */
int debughint__owners(const char *const *paths, size_t n, char (*pkgs)[DEBUGHINT_PKG_LEN]);

/*
 * The summary lines on @f: debug files refused as another build's (which
 * and what to do), and the files whose frames lacked names, how many
 * frames each, and what would name them. Nothing when there are none.
 */
void debughint__print(const struct symbolizer *sym, FILE *f);

#endif /* WPROF_DEBUGHINT_H */
