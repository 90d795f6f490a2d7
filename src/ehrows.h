/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The rows of .eh_frame in one pass over each FDE's instructions (see
 * ehrows.c): what cfirows.c gets from libdw one address range at a time,
 * at a small part of its cost.
 */
#ifndef WPROF_EHROWS_H
#define WPROF_EHROWS_H

#include <stddef.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

#include "wprof.h"

/*
 * Append to *@rows the rows of the FDEs of .eh_frame (@data, loaded at
 * @vaddr; @ident the ELF's e_ident) that .eh_frame_hdr lists: the one at
 * address @fdes[i] covers code from @starts[i] (sorted), with pc relative to
 * @base. Code an FDE does not cover up to the next one gets a
 * WPROF_CFA_NONE row. 0, -E2BIG when code lies below @base or 4 GiB above
 * it, or -ENOMEM.
 */
int ehrows__build(const unsigned char *ident, Elf_Data *data, __u64 vaddr, const __u64 *starts,
		  const __u64 *fdes, size_t nfde, __u64 base, struct wprof_unwind_row **rows,
		  size_t *nr, size_t *cap);

#endif /* WPROF_EHROWS_H */
