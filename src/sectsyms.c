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
 * An entry whose slot no relocation names (PLT0, IBT's lazy .plt entries,
 * an IRELATIVE slot) keeps no name. The entries are sh_entsize long; where
 * a linker left that 0, 16 bytes, or 8 if a 16-byte window holds two
 * stubs, named or not (one name must never cover another stub: a wrong
 * name is worse than none). Names are kept mangled ("_ZN1a1fEv@plt"): the
 * symbolizer demangles those it prints, as it does the symbol table's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sectsyms.h"
#include "util.h"

/* A PLT entry is never longer: bigger sh_entsize values are not PLTs we know. */
#define PLT_ENTRY_MAX 32
#define JMP_RIP_LEN 6 /* ff 25 disp32 */
/* Far more stubs than a real binary has: a bound on what a crafted file costs. */
#define SECTSYMS_MAX (1 << 20)

/*
 * The sections read, each name once: a crafted file with many headers of
 * one name (on the same bytes) costs no more than a real one.
 */
static const char *const code_names[] = { ".init", ".fini", ".plt", ".plt.sec", ".plt.got",
					   ".plt.bnd" };
static const char *const rela_names[] = { ".rela.plt", ".rela.dyn" };

/* @name's index in @names (bit @i of *@seen set now), or -1 if not there or seen before. */
static int first_of(const char *name, const char *const *names, int nr, unsigned int *seen)
{
	for (int i = 0; name && i < nr; i++) {
		if (strcmp(name, names[i]))
			continue;
		if (*seen & (1u << i))
			return -1;
		*seen |= 1u << i;
		return i;
	}
	return -1;
}

struct got_slot {
	__u64 addr; /* ELF vaddr */
	const char *name; /* in the ELF's string table; NULL: relocated to no named symbol */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int push(struct sectsym **syms, int *nr, size_t *cap, __u64 start, __u64 size, char *name)
{
	if (!name || array_reserve(syms, cap, *nr, sizeof(**syms), 16)) {
		free(name);
		return -ENOMEM;
	}
	(*syms)[(*nr)++] = (struct sectsym){ start, size, name };
	return 0;
}

/*
 * The GOT slots that dynamic relocations fill with a function's address,
 * sorted: named after the symbol they bind to, or unnamed (IRELATIVE, no
 * symbol), which still tells a stub is there.
 */
static int read_got_slots(Elf *elf, size_t shstrndx, struct got_slot **slots, size_t *nr)
{
	unsigned int seen = 0;
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	*slots = NULL;
	*nr = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *symscn;
		GElf_Shdr sh, symsh;
		Elf_Data *rel, *sym;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    first_of(elf_strptr(elf, shstrndx, sh.sh_name), rela_names,
			     ARRAY_SIZE(rela_names), &seen) < 0)
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
			const char *name = NULL;
			GElf_Rela r;
			GElf_Sym s;
			int type;

			if (!gelf_getrela(rel, i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
			    type != R_X86_64_IRELATIVE)
				continue;
			if (type != R_X86_64_IRELATIVE && GELF_R_SYM(r.r_info) &&
			    gelf_getsym(sym, GELF_R_SYM(r.r_info), &s)) {
				name = elf_strptr(elf, symsh.sh_link, s.st_name);
				if (name && !name[0])
					name = NULL;
			}
			if (*nr >= SECTSYMS_MAX)
				break;
			if (array_reserve(slots, &cap, *nr, sizeof(**slots), 64))
				return -ENOMEM;
			(*slots)[(*nr)++] = (struct got_slot){ r.r_offset, name };
		}
	}
	if (*nr)
		qsort(*slots, *nr, sizeof(**slots), slot_cmp);
	return 0;
}

/* "NAME@plt" */
static char *plt_name(const char *target)
{
	char *name;

	return asprintf(&name, "%s@plt", target) < 0 ? NULL : name;
}

/* The slot the "jmp *disp32(%rip)" at @b (section address @addr) reads, if a relocation fills it. */
static const struct got_slot *jmp_slot(const unsigned char *b, __u64 addr,
				       const struct got_slot *slots, size_t nr_slots)
{
	struct got_slot key;
	__s32 disp;

	if (b[0] != 0xff || b[1] != 0x25)
		return NULL;
	memcpy(&disp, b + 2, sizeof(disp)); /* x86-64: little-endian */
	key.addr = addr + JMP_RIP_LEN + (__s64)disp;
	return bsearch(&key, slots, nr_slots, sizeof(*slots), slot_cmp);
}

/*
 * The stubs of one PLT section, entries of @ent bytes: each named by the
 * slot its jmp reads, if that has a name. 1, with nothing added, if an
 * entry holds two such jmps: the entries are smaller than @ent (an old
 * linker's .plt.got with no sh_entsize), and one name would cover the next
 * stub.
 */
static int read_plt(const GElf_Shdr *sh, Elf_Data *d, __u64 ent, const struct got_slot *slots,
		    size_t nr_slots, __u64 bias, struct sectsym **syms, int *nr, size_t *cap)
{
	const unsigned char *b = d->d_buf;
	int first = *nr;

	for (__u64 off = 0; off + JMP_RIP_LEN <= d->d_size; off += ent) {
		/* the last entry may be cut short: an 8-byte stub read as 16 */
		__u64 len = d->d_size - off < ent ? d->d_size - off : ent;
		const struct got_slot *hit = NULL, *slot;

		/* the first jmp that reads a relocated slot; a false match in an immediate before it reads none */
		for (__u64 p = 0; p + JMP_RIP_LEN <= len; p++) {
			slot = jmp_slot(b + off + p, sh->sh_addr + off + p, slots, nr_slots);
			if (!slot)
				continue;
			if (hit) {
				while (*nr > first)
					free((*syms)[--*nr].name);
				return 1;
			}
			hit = slot;
		}
		if (!hit || !hit->name)
			continue;
		if (*nr >= SECTSYMS_MAX)
			return 0;
		if (push(syms, nr, cap, sh->sh_addr + off + bias, len, plt_name(hit->name)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * read_plt() with the section's entry size; where it gives none, 16 bytes
 * (every PLT but an old .plt.got), else 8.
 */
static int read_plt_section(const GElf_Shdr *sh, Elf_Data *d, const struct got_slot *slots,
			    size_t nr_slots, __u64 bias, struct sectsym **syms, int *nr, size_t *cap)
{
	__u64 ent = sh->sh_entsize;
	int ret;

	if (ent && (ent < JMP_RIP_LEN || ent > PLT_ENTRY_MAX))
		return 0;
	ret = read_plt(sh, d, ent ? ent : 16, slots, nr_slots, bias, syms, nr, cap);
	if (ret == 1 && !ent)
		ret = read_plt(sh, d, 8, slots, nr_slots, bias, syms, nr, cap);
	return ret < 0 ? ret : 0;
}

int sectsyms__read(Elf *elf, __u64 bias, struct sectsym **syms)
{
	struct got_slot *slots = NULL;
	size_t shstrndx, nr_slots = 0, cap = 0;
	int nr = 0, err = 0;
	unsigned int seen = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	bool x86;

	*syms = NULL;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	x86 = eh.e_machine == EM_X86_64 && eh.e_ident[EI_DATA] == ELFDATA2LSB;
	if (x86 && (err = read_got_slots(elf, shstrndx, &slots, &nr_slots)))
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;
		int which;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		which = first_of(elf_strptr(elf, shstrndx, sh.sh_name), code_names,
				 ARRAY_SIZE(code_names), &seen);
		if (which < 0)
			continue;
		if (which < 2) { /* .init, .fini */
			err = push(syms, &nr, &cap, sh.sh_addr + bias, sh.sh_size,
				   strdup(which ? "_fini" : "_init"));
		} else if (x86 && nr_slots) {
			d = elf_getdata(scn, NULL);
			if (d)
				err = read_plt_section(&sh, d, slots, nr_slots, bias, syms, &nr,
							       &cap);
		}
		if (err)
			goto cleanup;
	}
cleanup:
	free(slots);
	if (err || !nr) { /* also an array left empty by a stride retried */
		sectsyms__free(*syms, nr);
		*syms = NULL;
	}
	return err ? err : nr;
}

void sectsyms__free(struct sectsym *syms, int nr)
{
	for (int i = 0; i < nr; i++)
		free(syms[i].name);
	free(syms);
}
