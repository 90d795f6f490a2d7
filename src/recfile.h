/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A recording saved to a file (.wprof) and read back, for `wprof report`.
 *
 * gzip of, all integers little-endian:
 *
 *	"WPROFREC"  u32 version
 *	sections:   u32 tag, u64 length, then that many bytes
 *	            ... ending with tag 0 (RS_END), length 0
 *
 * A string is u32 length + bytes (no NUL). The sections, each at most once:
 *	RS_INFO      target, program, wprof's command line (strings); start,
 *	             window, period (ns), frequency (Hz); u32 flags (RF_*)
 *	RS_COUNTERS  u32 n + n u64: the profile's counters (recfile_priv.h)
 *	RS_BPF_STATS u32 n, then per statistic its name (statnames.c), u64
 *	RS_DRAIN, RS_SYMBOLIZER, RS_UNWIND   u32 n + n u64 each
 *	RS_THREADS   u32 n, then per thread its accounting
 *	RS_HISTS     u32 n, then per process u32 pid, u32 slots + u64 each
 *	RS_LINES     u64 n, then per stack: the line (string), weight, count, max
 *	RS_NOTES     string: the summary's debug hints
 *	RS_PROCS     u32 n, then per process u32 pid, its command line (string)
 * A section this version does not know is skipped, so a later wprof may
 * add sections without changing the version; a counter array longer than
 * this wprof's keeps its first entries, a shorter one leaves the rest 0.
 * The version changes when something this one reads would mean something
 * else.
 */
#ifndef WPROF_RECFILE_H
#define WPROF_RECFILE_H

#include <stddef.h>
#include <stdio.h>

#include "recording.h"

/* 2: threads have five states (steal); version 1's four are read too */
#define RECFILE_VERSION 2
/* The uncompressed content's first bytes. */
#define RECFILE_MAGIC "WPROFREC"
#define RECFILE_MAGIC_LEN 8
/* What a recording may take once decompressed: a guard against a hostile file. */
#define RECFILE_MAX_BYTES (1ULL << 30)

/* Write @r, gzip-compressed, to @f. 0 or -errno. */
int recfile__save(const struct recording *r, FILE *f);

/*
 * Read a recording from the file's bytes @buf (@len). 0, or -errno with
 * what is wrong in @why ("truncated recording (...)", "not a wprof
 * recording", "recording version 3 is newer than this wprof (...)"):
 * -ENOMSG foreign, -ENODATA truncated, -EBADMSG corrupt, -EPROTONOSUPPORT
 * newer, -EFBIG too large, -ENOMEM. @r is empty (memset 0) on failure.
 * What is not gzip, or does not inflate to the magic first, is refused
 * before the rest is inflated. A stack beyond stackcap.h's limits is cut
 * and counted (r->prof.stacks_cut_on_read, which the file may count too).
 */
int recfile__parse(const void *buf, size_t len, struct recording *r, char *why, size_t size);

/*
 * The bytes of @fd from where it is, after the @n bytes of @prefix (what
 * was read of it to tell what it is), at most RECFILE_MAX_BYTES, malloc'd;
 * or only its first 64 KiB when they show it is no recording (what
 * recfile__parse() says of them is what it would say of the whole).
 * 0 or -errno.
 */
int recfile__read_fd(int fd, const void *prefix, size_t n, void **buf, size_t *len);
/* The same from the start of the file @path. */
int recfile__read_file(const char *path, void **buf, size_t *len);

/* The same from the file @path; prints one line "PATH: WHY" on failure. */
int recfile__load(const char *path, struct recording *r);

#endif /* WPROF_RECFILE_H */
