/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names of JIT-compiled code from the map a runtime writes for perf:
 * /tmp/perf-PID.map (node --perf-basic-prof, python -X perf, JVM agents),
 * one function per line,
 *
 *	7f3c2a001000 1a0 LazyCompile:~handler /srv/app.js:12:5
 *
 * START and SIZE in hex (a "0x" is tolerated), then the name, which may
 * hold spaces. The runtime appends while it runs, and a later line for
 * the same addresses wins (code freed and reused).
 *
 * The file sits in a world-writable directory, so it is only trusted when
 * it is a regular file (not a symlink) owned by the process's effective uid
 * and readable by it; only its first PERFMAP_MAX_BYTES are read. A process in another mount namespace or chroot wrote it
 * under its own root: /proc/PID/root/tmp/perf-NSPID.map, NSPID being its
 * pid in its own pid namespace.
 */
#ifndef WPROF_PERFMAP_H
#define WPROF_PERFMAP_H

#include <stdbool.h>
#include <linux/types.h>

struct perfmap;

#define PERFMAP_MAX_BYTES (64U << 20)

/* Whether the map was bigger than PERFMAP_MAX_BYTES (and the rest not read). */
bool perfmap__truncated(const struct perfmap *pm);

/*
 * Where the perf map of @pid is, whether it exists yet or not; nothing is
 * read until perfmap__refresh(). NULL with errno on failure (ESRCH: the
 * process is gone).
 */
struct perfmap *perfmap__new(int pid);

/*
 * Open the map if not yet open (through the process's root while it runs;
 * after it exited, through our /tmp when it shares our root and pid
 * numbers), then read what it gained since the last call: cheap when it is
 * unchanged (size, mtime). Returns 1 when names changed, 0 when not, or
 * -errno: -ENOENT no map (yet), -EPERM a map that is not trusted.
 */
int perfmap__refresh(struct perfmap *pm);

/* Whether the map file was opened: from then on it is read through that fd. */
bool perfmap__is_open(const struct perfmap *pm);

/* The name of the JIT function at @addr, or NULL. Valid until the next refresh. */
const char *perfmap__find(const struct perfmap *pm, __u64 addr);

/* Number of functions known. */
__u64 perfmap__count(const struct perfmap *pm);

/* NULL is ok. */
void perfmap__free(struct perfmap *pm);

#endif /* WPROF_PERFMAP_H */
