/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which file each frame of a recording came from: the mappings of a pprof
 * profile. Lines hold frames as names only, so a name is noted with the
 * process it was found in (the same name may be two files' in two
 * processes: every program has a "main"), and once more for any process,
 * which answers for the frames of wakers in other processes and for kernel
 * frames. A name that came from two files where it was noted has no
 * origin: it is counted, never guessed.
 */
#ifndef WPROF_ORIGINS_H
#define WPROF_ORIGINS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

/* The pid of the entries that answer for any process. */
#define ORIGIN_ANY_PID UINT32_MAX
/* The origin of a name found in two files. */
#define ORIGIN_AMBIGUOUS UINT32_MAX

struct origin {
	char *path;     /* as the process mapped it, or "[vdso]", "[jit]", "[kernel.kallsyms]" */
	char *build_id; /* lowercase hex, "" when there is none */
};

struct origin_frame {
	__u32 pid;    /* ORIGIN_ANY_PID: any process's */
	__u32 origin; /* index in origins.list, or ORIGIN_AMBIGUOUS */
	char *name;   /* as the lines hold it (folded__sanitize()d) */
};

struct origins {
	struct origin *list;
	size_t nr, cap;
	struct origin_frame *frames;
	size_t nr_frames, cap_frames;
	struct strmap *origin_ids; /* "path\0build-id" -> index in list */
	struct strmap *frame_ids;  /* pid (4 bytes) + name -> index in frames */
};

/* Everything freed; @o is empty (zeroed) afterwards and may be reused. */
void origins__clear(struct origins *o);

/* The index of the origin (@path, @build_id), added when new: >= 0 or -ENOMEM. */
long origins__add(struct origins *o, const char *path, const char *build_id);

/*
 * Note that frame @name (@len bytes, as the lines hold it) of process @pid
 * came from origin @idx, under @pid and under ORIGIN_ANY_PID (only the
 * latter when @pid is ORIGIN_ANY_PID). 0 or -ENOMEM.
 */
int origins__note(struct origins *o, __u32 pid, const char *name, size_t len, __u32 idx);

/*
 * Add an entry as it was noted (@origin may be ORIGIN_AMBIGUOUS), for a
 * reader of saved recordings. 0, -EINVAL for an origin out of range or an
 * entry already there, -ENOMEM.
 */
int origins__put(struct origins *o, __u32 pid, const char *name, size_t len, __u32 origin);

/*
 * The origin of frame @name (@len bytes) of process @pid: the index of its
 * file, -ENOENT when nothing is known of it, -EEXIST when it came from two
 * files.
 */
long origins__find(const struct origins *o, __u32 pid, const char *name, size_t len);

#endif /* WPROF_ORIGINS_H */
