// SPDX-License-Identifier: GPL-2.0-only
/*
 * Section symbols: .init, .fini, and x86-64 PLT stubs by the GOT slot
 * they jump through.
 *
 * A PLT stub is found by its instruction, not by its place: every x86-64
 * layout (lazy .plt entries, IBT's .plt.sec, .plt.got, with or without
 * endbr64 and bnd prefixes) reaches its function with one
 * "jmp *disp32(%rip)" (ff 25), whose target is a GOT slot that a
 * JUMP_SLOT or GLOB_DAT relocation names. Counting entries from the start
 * of .plt instead would misname every stub of a layout it did not expect.
 * An entry whose slot no relocation names (PLT0, IBT's lazy .plt entries)
 * keeps no name.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "sectsyms.h"

/* A PLT entry is never longer: bigger sh_entsize values are not PLTs we know. */
#define PLT_ENTRY_MAX 32
#define JMP_RIP_LEN 6 /* ff 25 disp32 */

struct got_slot {
	__u64 addr; /* ELF vaddr */
	const char *name; /* in the ELF's string table */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int push(struct sectsym **syms, int *nr, int *cap, __u64 start, __u64 size, char *name)
{
	if (!name)
		return -ENOMEM;
	if (*nr == *cap) {
		int ncap = *cap ? *cap * 2 : 16;
		struct sectsym *n = realloc(*syms, ncap * sizeof(*n));

		if (!n) {
			free(name);
			return -ENOMEM;
		}
		*syms = n;
		*cap = ncap;
	}
	(*syms)[(*nr)++] = (struct sectsym){ start, size, name };
	return 0;
}

/* The GOT slots that dynamic relocations bind to a named symbol, sorted. */
static int read_got_slots(Elf *elf, struct got_slot **slots, size_t *nr)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	*slots = NULL;
	*nr = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *symscn;
		GElf_Shdr sh, symsh;
		Elf_Data *rel, *sym;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		rel = elf_getdata(scn, NULL);
		sym = elf_getdata(symscn, NULL);
		if (!rel || !sym)
			continue;
		count = rel->d_size / sh.sh_entsize;
		for (i = 0; i < count; i++) {
			const char *name;
			GElf_Rela r;
			GElf_Sym s;
			int type;

			if (!gelf_getrela(rel, i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			if (!GELF_R_SYM(r.r_info) || !gelf_getsym(sym, GELF_R_SYM(r.r_info), &s))
				continue;
			name = elf_strptr(elf, symsh.sh_link, s.st_name);
			if (!name || !name[0])
				continue;
			if (*nr == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct got_slot *n = realloc(*slots, ncap * sizeof(*n));

				if (!n)
					return -ENOMEM;
				*slots = n;
				cap = ncap;
			}
			(*slots)[(*nr)++] = (struct got_slot){ r.r_offset, name };
		}
	}
	if (*nr)
		qsort(*slots, *nr, sizeof(**slots), slot_cmp);
	return 0;
}

/* "NAME@plt", with NAME demangled as the other symbols are. */
static char *plt_name(const char *target)
{
	char *d = demangle__name(target), *name;

	if (asprintf(&name, "%s@plt", d ? d : target) < 0)
		name = NULL;
	free(d);
	return name;
}

/* The stubs of one PLT section: each entry named by the slot its jmp reads. */
static int read_plt(const GElf_Shdr *sh, Elf_Data *d, const struct got_slot *slots,
		    size_t nr_slots, __u64 bias, struct sectsym **syms, int *nr, int *cap)
{
	__u64 ent = sh->sh_entsize ? sh->sh_entsize : 16, off;
	const unsigned char *b = d->d_buf;

	if (ent < JMP_RIP_LEN || ent > PLT_ENTRY_MAX || !b)
		return 0;
	for (off = 0; off + ent <= d->d_size; off += ent) {
		for (__u64 p = 0; p + JMP_RIP_LEN <= ent; p++) {
			struct got_slot key, *slot;
			__s32 disp;

			if (b[off + p] != 0xff || b[off + p + 1] != 0x25)
				continue;
			memcpy(&disp, b + off + p + 2, sizeof(disp)); /* x86-64: little-endian */
			key.addr = sh->sh_addr + off + p + JMP_RIP_LEN + (__s64)disp;
			slot = bsearch(&key, slots, nr_slots, sizeof(*slots), slot_cmp);
			if (slot && push(syms, nr, cap, sh->sh_addr + off + bias, ent,
					 plt_name(slot->name)))
				return -ENOMEM;
			break;
		}
	}
	return 0;
}

int sectsyms__read(Elf *elf, __u64 bias, struct sectsym **syms)
{
	struct got_slot *slots = NULL;
	size_t shstrndx, nr_slots = 0;
	int nr = 0, cap = 0, err = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	bool x86;

	*syms = NULL;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	x86 = eh.e_machine == EM_X86_64 && eh.e_ident[EI_DATA] == ELFDATA2LSB;
	if (x86 && (err = read_got_slots(elf, &slots, &nr_slots)))
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".init") || !strcmp(name, ".fini")) {
			err = push(syms, &nr, &cap, sh.sh_addr + bias, sh.sh_size,
				   strdup(name[1] == 'i' ? "_init" : "_fini"));
		} else if (x86 && nr_slots && !strncmp(name, ".plt", 4)) {
			d = elf_getdata(scn, NULL);
			if (d)
				err = read_plt(&sh, d, slots, nr_slots, bias, syms, &nr, &cap);
		}
		if (err)
			goto cleanup;
	}
cleanup:
	free(slots);
	if (err) {
		sectsyms__free(*syms, nr);
		*syms = NULL;
		return err;
	}
	return nr;
}

void sectsyms__free(struct sectsym *syms, int nr)
{
	for (int i = 0; i < nr; i++)
		free(syms[i].name);
	free(syms);
}
