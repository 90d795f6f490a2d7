/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unwind tables for the in-kernel user stack walk (bpf/unwind.bpf.h): each
 * executable file's .eh_frame as rows (struct wprof_unwind_row), built once
 * per file, and per process the map of which file is where (struct
 * wprof_proc_maps).
 *
 * Rows are built before the BPF maps exist (so that the row array can be
 * sized), then bound to them; from then on new rows and process maps go to
 * the kernel as soon as they are made, and the rows of code no live process
 * maps give their room to other code's when it is short (unwtab.c).
 */
#ifndef WPROF_UNWTAB_H
#define WPROF_UNWTAB_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "wprof.h"

struct proclive;

struct proc_maps;

struct unwtab;

struct unwtab_stats {
	__u64 files;          /* executable files with rows */
	__u64 files_no_cfi;   /* ... without .eh_frame / .eh_frame_hdr: frame-pointer steps */
	__u64 files_no_room;  /* ... whose rows did not fit in the kernel's row array */
	__u64 rows;           /* rows built */
	__u64 procs;          /* process maps sent to the kernel */
	__u64 procs_failed;   /* processes whose maps could not be read or sent */
	__u64 maps_truncated; /* processes with more than WPROF_MAX_EXEC_MAPS executable maps */
	__u64 build_ns;       /* time spent building rows */
	__u64 files_cfi_refused; /* ... whose CFI names registers no CPU has: frame-pointer steps */
	/* ... whose .debug_frame would inflate past the bound of zsects.h: not read */
	__u64 files_inflate_refused;
	__u64 rows_live_peak;   /* most rows in use at once by live processes' files */
	__u64 rows_capacity;    /* rows in the kernel's array */
	__u64 files_given_back; /* kernel copies given back for others' room */
	__u64 files_rebuilt;    /* files built again (their rows dropped to the memory budget) */
	__u64 room_waits;       /* processes whose maps waited for room to be given back */
	__u64 images_dropped;   /* files' rows dropped from user memory to the budget */
};

struct unwtab *unwtab__new(void); /* NULL and errno on failure */
void unwtab__free(struct unwtab *u); /* NULL ok */

/*
 * Read @pid's executable mappings, build the rows of files not seen before,
 * and send the process's maps to the kernel (once bound; until then they
 * wait). 0 or -errno; -ESRCH when the process is gone.
 */
int unwtab__add_pid(struct unwtab *u, int pid);
/* The same from @pid's mappings read already, @ticks its start time (unwtab__add_pid()). */
int unwtab__add_maps(struct unwtab *u, int pid, __u64 ticks, const struct proc_maps *maps);
/* @pid was found gone: its kernel entry, if any, goes. */
void unwtab__gone(struct unwtab *u, int pid);
/*
 * Forget processes that exited (their kernel entries too), as @live tells
 * (NULL: /proc): the rows of files no live process maps may then be given
 * back for others' (see unwtab.c).
 */
void unwtab__prune(struct unwtab *u, struct proclive *live);
/*
 * Every BPF program run that began before the caller's last update of a
 * map of maps has ended (a drain's): room given back before it can be
 * used again once it is a second old (rowalloc.h).
 */
void unwtab__grace(struct unwtab *u);
/*
 * Up to @max processes whose maps wait for room being given back, into
 * @pids: read them again after the next grace point. How many.
 */
size_t unwtab__waiting(const struct unwtab *u, __u32 *pids, size_t max);
/* Rows the files of the processes known so far take: what the kernel's array must hold. */
size_t unwtab__nr_rows(const struct unwtab *u);

/*
 * Bind to the kernel's maps: @rows, the mmap()ed row array of @max_rows
 * entries (zeroed); @procs_fd, the tgid -> struct wprof_proc_maps hash.
 * Sends what waits. 0 or -errno.
 */
int unwtab__bind(struct unwtab *u, struct wprof_unwind_row *rows, __u32 max_rows, int procs_fd);

/*
 * @pid's maps as last read, with their rows placed in the kernel's array
 * (NULL: none, or still waiting for room), and that array (@nr_rows
 * entries; NULL before unwtab__bind()): what held stacks are walked with.
 */
const struct wprof_proc_maps *unwtab__maps(const struct unwtab *u, __u32 pid);
/* When @pid's maps as last given were read (struct proc_maps read_ns), or 0. */
__u64 unwtab__read_ns(const struct unwtab *u, __u32 pid);
const struct wprof_unwind_row *unwtab__rows(const struct unwtab *u, __u32 *nr_rows);

void unwtab__stats(const struct unwtab *u, struct unwtab_stats *st);

#endif /* WPROF_UNWTAB_H */
