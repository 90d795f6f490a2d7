/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython processes: which targets run a CPython whose frames the BPF side
 * can read (bpf/python.bpf.h), found from the files they map, and the names
 * of their code objects as the BPF side read them (struct wprof_py_code).
 */
#ifndef WPROF_PYPROC_H
#define WPROF_PYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct proc_maps;
struct proclive;
struct pyproc;

/* NULL without memory. */
struct pyproc *pyproc__new(void);
void pyproc__free(struct pyproc *py);

/*
 * From now on tell the BPF side through map @procs_fd (py_procs) and take
 * code objects from @codes_fd (py_codes); the processes found before are
 * told now. 0 or -errno.
 */
int pyproc__bind(struct pyproc *py, int procs_fd, int codes_fd);

/*
 * Look at the files @pid (started at @start_ticks) maps: where one is a
 * CPython (it has _PyRuntime) of a version wprof knows, tell the BPF side
 * how to read its frames. A version it does not know is remembered for the
 * summary, and its stacks stay native. Once per process start.
 */
void pyproc__add_maps(struct pyproc *py, int pid, __u64 start_ticks, const struct proc_maps *maps);

/* Take the code objects the BPF side named since the last call (and free their room). */
/* @pid ended: the BPF side forgets it (its room is another's). */
void pyproc__gone(struct pyproc *py, int pid);
/* ... every process that ended, as @live tells. */
void pyproc__prune(struct pyproc *py, struct proclive *live);

void pyproc__take_codes(struct pyproc *py);

/*
 * The name of Python frame word @w (WPROF_FRAME_PY or WPROF_FRAME_PY_CUT),
 * @at the WPROF_FRAME_PY_AT word after it (0: none): "qualname (file.py:LINE)",
 * LINE the one it was at ("qualname (file.py)" where not known); "[py: ...]"
 * for a cut or a code object whose name was not kept (1 for that, else 0).
 */
int pyproc__frame_name(const struct pyproc *py, __u64 w, __u64 at, char *buf, size_t size);

struct pyproc_stats {
	size_t procs;        /* processes whose Python frames were read */
	size_t unknown;      /* processes of a CPython version wprof cannot read */
	char unknown_ver[16]; /* the first such version, "3.10" */
	size_t codes;        /* code objects named */
	size_t full;         /* processes not read: the BPF side's table of them was full */
	size_t collided;     /* code ids two code objects hashed to (their frames not named) */
};
void pyproc__stats(const struct pyproc *py, struct pyproc_stats *out);

/* The summary's lines on CPython processes whose frames were not read (none if all were). */
void pyproc__print_notes(const struct pyproc *py, FILE *f);

#endif /* WPROF_PYPROC_H */
