/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_UNWIND_H
#define WPROF_UNWIND_H

#include <elfutils/libdw.h>
#include <linux/types.h>

#include "wprof.h"

/* The CFI covering `ip` of `pid`, and ip's address in that CFI's terms. */
typedef Dwarf_CFI *(*unwind_cfi_fn)(void *ctx, int pid, __u64 ip, __u64 *cfi_addr);

struct unwind_stats {
	__u64 stacks;     /* stacks with a copy, tried */
	__u64 recovered;  /* ... that gained frames */
	__u64 frames;     /* frames gained */
	__u64 unjoined;   /* CFI and frame-pointer walks never met: CFI frames only */
};

/*
 * Recover the frames a frame-pointer walk (`fp`, leaf first) skipped in code
 * built without frame pointers: unwind the copied stack top `c` with the
 * code's CFI until it meets the frame-pointer chain, and continue with that
 * chain from there. Writes the result to `out` (leaf first); 0 when nothing
 * changed, 1 when frames were recovered.
 */
int unwind__recover(unwind_cfi_fn cfi_at, void *ctx, int pid, const struct wprof_stack *fp,
		    const struct wprof_ucopy *c, struct wprof_stack *out, struct unwind_stats *st);

#endif /* WPROF_UNWIND_H */
