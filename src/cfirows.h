/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The unwind rows of one ELF image (struct wprof_unwind_row): its CFI
 * reduced to the rules the BPF walk follows (bpf/unwind.bpf.h).
 */
#ifndef WPROF_CFIROWS_H
#define WPROF_CFIROWS_H

#include <stddef.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

#include "wprof.h"

/*
 * Append to *@rows (realloc'd; *@nr rows, *@cap allocated) the rows of
 * @elf's .eh_frame (and .debug_frame where .eh_frame has no CFI), with pc
 * relative to *@base (the lowest address covered, lowered if CFI starts
 * below it). 0, or -ENOENT when @elf has no usable CFI, -E2BIG when its
 * code spans 4 GiB, -EBADMSG when its CFI names a register above any
 * CPU's (none is used), -ENOMEM.
 */
int cfirows__build(Elf *elf, struct wprof_unwind_row **rows, size_t *nr, size_t *cap,
		   __u64 *base);

/*
 * The same, with libdw running every row of .eh_frame (dwarf_cfi_addrframe()
 * at each address range: many times slower): what the tests compare with.
 */
int cfirows__build_libdw(Elf *elf, struct wprof_unwind_row **rows, size_t *nr, size_t *cap,
			 __u64 *base);

/*
 * Append @row to the rows from index @first on, unless the rules before it
 * go on (no new row) or it starts where the last one does (it replaces it).
 * 0 or -ENOMEM.
 */
int cfirows__push(struct wprof_unwind_row **rows, size_t *nr, size_t *cap, size_t first,
		  const struct wprof_unwind_row *row);

#endif /* WPROF_CFIROWS_H */
