/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names for code that no symbol table names, yet every program runs: the
 * .init and .fini sections (a library's constructor and destructor
 * entries, "_init" and "_fini" as the linker's crti.o calls them) and, on
 * x86-64, each PLT stub, named after the function it jumps to
 * ("crc32_z@plt"), from the relocation of the GOT slot it jumps through.
 * A stripped library has no symbol for any of them, so a sample that lands
 * there (a page fault on a constructor's first instruction, a hot call
 * through the PLT) would otherwise be named by file and offset.
 */
#ifndef WPROF_SECTSYMS_H
#define WPROF_SECTSYMS_H

#include <stddef.h>
#include <gelf.h>
#include <linux/types.h>

struct sectsym {
	__u64 start, size; /* module addresses: ELF vaddr + bias */
	char *name;	   /* malloc()ed */
};

/*
 * The section symbols of @elf, whose module addresses are its vaddrs plus
 * @bias, in *@syms (free with sectsyms__free()). Returns how many (0 with
 * *@syms NULL if none), or -errno.
 */
int sectsyms__read(Elf *elf, __u64 bias, struct sectsym **syms);

void sectsyms__free(struct sectsym *syms, int nr);

#endif /* WPROF_SECTSYMS_H */
