/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parser of /proc/PID/maps: the address ranges of a process and the files
 * mapped there, which the symbolizer needs to turn an address into
 * (file, file offset).
 */
#ifndef WPROF_PROCMAPS_H
#define WPROF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct proc_map {
	__u64 start, end; /* [start, end) */
	__u64 pgoff;	  /* file offset of start */
	__u64 inode;
	__u32 dev_major, dev_minor;
	char perms[5]; /* "r-xp" */
	/*
	 * NULL for anonymous memory; kernel pseudo names ("[vdso]", "[heap]",
	 * "[anon:name]") are kept. A " (deleted)" suffix is stripped and
	 * recorded in @deleted.
	 */
	char *path;
	bool deleted;
};

struct proc_maps {
	struct proc_map *maps; /* sorted by start */
	size_t nr;
	/*
	 * procmaps__read_proc(): where the stack began (field 28 of
	 * /proc/PID/stat, mm->start_stack; changes at every exec, with
	 * address space randomization), the same before and after the maps
	 * were read; and where the program's code begins (field 26)
	 */
	__u64 start_stack, start_code;
	__u64 read_ns; /* procmaps__read_proc(): when the maps were read (now_ns()) */
};

/*
 * Parse maps text from @f into @out (to free with procmaps__free()).
 * 0 or -errno; -EINVAL on a malformed line.
 */
int procmaps__parse(FILE *f, struct proc_maps *out);
/* Read /proc/@pid/maps. -ESRCH if the process is gone. */
int procmaps__read(int pid, struct proc_maps *out);
/* Whether the kernel counts @m in mm->exec_vm: executable, not writable, not the [vsyscall]. */
bool procmaps__counts_as_exec(const struct proc_map *m);
/* The pages mapped executable, as mm->exec_vm counts them. */
__u64 procmaps__exec_pages(const struct proc_maps *maps);
/* The mapping that contains @addr, or NULL. */
const struct proc_map *procmaps__find(const struct proc_maps *m, __u64 addr);
/*
 * Open the file mapped at @m in @pid, read-only: through /proc/PID/map_files
 * (the very file, even deleted; needs CAP_SYS_ADMIN), else PATH resolved in
 * /proc/PID/root (the process's mount namespace and root, symlinks kept
 * inside), else PATH itself if it is the same (dev, inode). Only regular
 * files are opened. An fd or -errno.
 */
int procmaps__open_file(int pid, const struct proc_map *m);
/*
 * Where @pid's program interpreter (the dynamic loader) was loaded: AT_BASE
 * of its auxiliary vector, which the kernel wrote at exec (0: none, a
 * static program). 0 or -errno.
 */
int procmaps__interp_base(int pid, __u64 *base);
/*
 * The mappings of @maps an exec made: the program's file (mapped at
 * @maps->start_code), its interpreter's (mapped at @interp_base, unless 0)
 * and the vDSO, copied into @out with @maps's starts and read_ns. 0 or
 * -errno (-ENOENT: no program code in @maps).
 */
int procmaps__at_exec(const struct proc_maps *maps, __u64 interp_base, struct proc_maps *out);
/* Read @len bytes at @addr of @pid's memory (/proc/PID/mem). 0 or -errno (-EIO if short). */
int procmaps__read_mem(int pid, __u64 addr, void *buf, size_t len);
/*
 * When @pid started, in clock ticks since boot (field 22 of /proc/PID/stat):
 * tells a reused pid from the process seen before. 0 or -errno (-ESRCH).
 */
int procmaps__start_time(int pid, __u64 *start_time);
/*
 * What a snapshot of @pid takes: its start time (procmaps__start_time()),
 * and its mappings (procmaps__read()) with the starts of its code and
 * stack. 0 or -errno (-ESRCH if it is gone, -EAGAIN if it exec'd each
 * time it was read), @out empty on failure.
 */
int procmaps__read_proc(int pid, __u64 *start_time, struct proc_maps *out);
/* An executable mapping as the kernel's PROCMAP_QUERY gives it (no padding: compared whole). */
struct code_map {
	__u64 start, end, pgoff, inode;
	__u32 dev_major, dev_minor;
	__u64 flags; /* readable, writable, executable, shared */
};

/*
 * @pid's executable mappings, asked of the kernel one at a time
 * (PROCMAP_QUERY, Linux 6.11+) rather than read as the text of every
 * mapping: what tells that a process's code is as it was, for the cost of
 * its code mappings alone. *@out is malloc'd (NULL when there are none).
 * 0 or -errno (-EOPNOTSUPP where the kernel lacks the query, -ESRCH if the
 * process is gone).
 */
int procmaps__code_maps(int pid, struct code_map **out, size_t *nr);
/*
 * A copy of the vDSO image mapped at @m in @pid, malloc'd, of *@len bytes;
 * NULL if it cannot be read. When @pid's memory is not readable, our own
 * vDSO stands in if it has the same size (every native process maps the
 * same image).
 */
void *procmaps__copy_vdso(int pid, const struct proc_map *m, size_t *len);
/* Frees the maps and resets @m to empty; NULL is ok. */
void procmaps__free(struct proc_maps *m);

static inline bool proc_map__is_exec(const struct proc_map *m)
{
	return m->perms[2] == 'x';
}

#endif /* WPROF_PROCMAPS_H */
