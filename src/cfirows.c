// SPDX-License-Identifier: GPL-2.0-only
/*
 * From .eh_frame to rows the BPF walk can follow. .eh_frame_hdr's sorted
 * table says where each FDE starts, and so where code without CFI lies
 * between them (a WPROF_CFA_NONE row: frame-pointer steps there); each FDE
 * is run once (ehrows.c). .debug_frame (Go) is interpreted by libdw
 * (dwarf_cfi_addrframe(): the rules in force at an address, and the range
 * they hold for), as .eh_frame was: the tests compare the two ways. Rules are reduced to what x86-64 compilers
 * emit: CFA = rsp or rbp + offset, return address at CFA - 8 (or in rdi,
 * where glibc's vfork() keeps it), rbp saved at CFA + n * 8 or unchanged; the
 * PLT's expression; the signal trampoline; and, without CFI, the code after
 * the syscall of glibc's clone() and clone3() (syscall_rows()), where the
 * code itself proves the rule.
 * Anything else ends a walk there (WPROF_CFA_BAD), it is never guessed.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfirows.h"
#include "ehrows.h"
#include "hmap.h"
#include "util.h"

#define REG_FP 6  /* rbp */
#define REG_SP 7  /* rsp */
#define REG_RA 16 /* the return address column */
#define REG_RDI 5

static int read_encoded(const __u8 *p, const __u8 *end, __u8 enc, __u64 datarel, __u64 *val,
			const __u8 **next)
{
	__u64 v;
	int len;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
		len = 4;
		if (p + len > end)
			return -EINVAL;
		v = (__u32)(p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24);
		break;
	case DW_EH_PE_sdata4:
		len = 4;
		if (p + len > end)
			return -EINVAL;
		v = (__s64)(__s32)(p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24);
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
	case DW_EH_PE_absptr:
		len = 8;
		if (p + len > end)
			return -EINVAL;
		memcpy(&v, p, 8);
		break;
	default:
		return -EINVAL;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_datarel:
		v += datarel;
		break;
	default:
		return -EINVAL; /* pcrel is fine to skip, not to use */
	}
	*val = v;
	*next = p + len;
	return 0;
}

/*
 * The FDE start addresses of .eh_frame_hdr's table (sorted), malloc'd, and
 * the FDEs' own addresses in *@fdes (malloc'd too).
 */
static int fde_starts(Elf *elf, __u64 **out, __u64 **fdes, size_t *nr)
{
	const __u8 *p, *end;
	__u64 hdr_vaddr = 0, v, count;
	Elf_Data *data = NULL;
	size_t nphdr;
	__u8 table_enc;

	if (elf_getphdrnum(elf, &nphdr))
		return -EINVAL;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
			data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
			hdr_vaddr = ph.p_vaddr;
			break;
		}
	}
	if (!data || data->d_size < 4)
		return -ENOENT;
	p = data->d_buf;
	end = p + data->d_size;
	if (p[0] != 1 || p[3] == DW_EH_PE_omit)
		return -ENOENT;
	table_enc = p[3];
	/* eh_frame_ptr: skipped (its encoding is pc-relative); then the count */
	if (read_encoded(p + 4, end, p[1] & 0x0f, 0, &v, &p) ||
	    read_encoded(p, end, ((const __u8 *)data->d_buf)[2], hdr_vaddr, &count, &p))
		return -ENOENT;
	if (count > (size_t)(end - p) / 8)
		return -EINVAL;
	*out = malloc((count + 1) * sizeof(**out));
	*fdes = malloc((count + 1) * sizeof(**fdes));
	if (!*out || !*fdes) {
		free(*out);
		free(*fdes);
		*out = *fdes = NULL;
		return -ENOMEM;
	}
	*nr = 0;
	for (__u64 i = 0; i < count; i++) {
		__u64 loc, fde;

		if (read_encoded(p, end, table_enc, hdr_vaddr, &loc, &p) ||
		    read_encoded(p, end, table_enc, hdr_vaddr, &fde, &p))
			break;
		if (*nr && loc <= (*out)[*nr - 1])
			continue; /* not sorted: keep what is */
		(*fdes)[*nr] = fde;
		(*out)[(*nr)++] = loc;
	}
	return 0;
}

/* Where a register rule saves the register: CFA + *off. -1 for other rules. */
static int saved_at(const Dwarf_Op *ops, size_t nops, __s64 *off)
{
	*off = 0;
	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	for (size_t i = 1; i < nops; i++) {
		if (ops[i].atom == DW_OP_plus_uconst)
			*off += (__s64)ops[i].number;
		else if (ops[i].atom == DW_OP_consts && i + 1 < nops &&
			 ops[i + 1].atom == DW_OP_plus)
			*off += (__s64)ops[i++].number;
		else
			return -1;
	}
	return 0;
}

/* The PLT's CFA: rsp + 8, + 8 more once (rip & 15) >= N, after its push. */
static bool plt_expr(const Dwarf_Op *ops, size_t nops, __u16 *n)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[1].number != 0 || ops[2].atom != DW_OP_lit15 ||
	    ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return false;
	*n = ops[4].atom - DW_OP_lit0;
	return true;
}

/* The rules of one row. */
static void classify(Dwarf_Frame *fr, int ra_reg, bool signal, struct wprof_unwind_row *row)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	__u64 reg;
	__s64 off;

	row->kind = WPROF_CFA_BAD;
	row->cfa_off = 0;
	row->fp_off8 = 0;
	if (dwarf_frame_cfa(fr, &ops, &nops))
		return;
	if (nops == 1 && (ops[0].atom == DW_OP_bregx ||
			  (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		reg = ops[0].atom == DW_OP_bregx ? ops[0].number : (__u64)(ops[0].atom - DW_OP_breg0);
		off = ops[0].atom == DW_OP_bregx ? (__s64)ops[0].number2 : (__s64)ops[0].number;
		if ((reg != REG_SP && reg != REG_FP) || off < 0 || off > 0xffff)
			return;
		row->kind = reg == REG_SP ? WPROF_CFA_SP : WPROF_CFA_FP;
		row->cfa_off = off;
	} else if (signal) {
		row->kind = WPROF_CFA_SIGNAL;
		return;
	} else if (plt_expr(ops, nops, &row->cfa_off)) {
		row->kind = WPROF_CFA_PLT;
		return;
	} else {
		return;
	}
	if (ra_reg != REG_RA || dwarf_frame_register(fr, REG_RA, ops_mem, &ops, &nops)) {
		row->kind = WPROF_CFA_BAD;
		return;
	}
	if (!nops) {
		row->kind = WPROF_CFA_END; /* undefined: the outermost frame */
		return;
	}
	if (nops == 1 && ((ops[0].atom == DW_OP_regx && ops[0].number == REG_RDI) ||
			  ops[0].atom == DW_OP_reg0 + REG_RDI)) {
		/* in rdi (see WPROF_CFA_RA_RDI), with rbp where it was */
		if (row->kind != WPROF_CFA_SP ||
		    (!dwarf_frame_register(fr, REG_FP, ops_mem, &ops, &nops) && nops))
			row->kind = WPROF_CFA_BAD;
		else
			row->kind = WPROF_CFA_RA_RDI;
		return;
	}
	if (saved_at(ops, nops, &off) || off != -8) {
		row->kind = WPROF_CFA_BAD;
		return;
	}
	if (dwarf_frame_register(fr, REG_FP, ops_mem, &ops, &nops) || !nops)
		return; /* no rule: unchanged (callee-saved) */
	if (saved_at(ops, nops, &off) || off % 8 || off / 8 <= WPROF_FP_LOST || off / 8 > 127)
		row->fp_off8 = WPROF_FP_LOST;
	else
		row->fp_off8 = off / 8;
}

int cfirows__push(struct wprof_unwind_row **rows, size_t *nr, size_t *cap, size_t first,
		  const struct wprof_unwind_row *row)
{
	struct wprof_unwind_row *last = *nr > first ? &(*rows)[*nr - 1] : NULL;

	if (last && last->kind == row->kind && last->cfa_off == row->cfa_off &&
	    last->fp_off8 == row->fp_off8)
		return 0; /* the same rules go on */
	if (last && last->pc >= row->pc) {
		if (last->pc == row->pc)
			*last = *row;
		return 0; /* overlapping FDEs: the first one wins */
	}
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		struct wprof_unwind_row *n = realloc(*rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		*rows = n;
		*cap = ncap;
	}
	(*rows)[(*nr)++] = *row;
	return 0;
}

/* The rows of one CFI section, its FDEs starting at @starts (sorted). */
static int rows_of(Dwarf_CFI *cfi, const __u64 *starts, size_t nfde, __u64 base,
		   struct wprof_unwind_row **rows, size_t *nr, size_t *cap)
{
	struct wprof_unwind_row row;
	size_t first = *nr;
	int err = 0;

	for (size_t i = 0; i < nfde && !err; i++) {
		__u64 pc = starts[i], next = i + 1 < nfde ? starts[i + 1] : ~0ULL;

		if (pc < base || pc - base > 0xffffffffULL)
			return -E2BIG;
		while (pc < next && !err) {
			Dwarf_Frame *fr = NULL;
			Dwarf_Addr start, end;
			bool signal = false;
			int ra_reg;

			if (dwarf_cfi_addrframe(cfi, pc, &fr))
				break;
			ra_reg = dwarf_frame_info(fr, &start, &end, &signal);
			classify(fr, ra_reg, signal, &row);
			free(fr);
			if (pc - base > 0xffffffffULL)
				return -E2BIG;
			row.pc = pc - base;
			err = cfirows__push(rows, nr, cap, first, &row);
			if (end <= pc)
				break;
			pc = end;
		}
		/* code between this FDE's end and the next FDE has no CFI */
		if (!err && pc < next && pc - base <= 0xffffffffULL) {
			row = (struct wprof_unwind_row){ .pc = pc - base, .kind = WPROF_CFA_NONE };
			err = cfirows__push(rows, nr, cap, first, &row);
		}
	}
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/*
 * Register numbers in CFI: x86-64's go up to 130 or so. libdw sizes the
 * frame it builds for an address by the largest register the CFI there
 * names, and takes up to 2 GiB (and the time to zero it) for a number a
 * hostile file can write: such CFI is refused whole, before libdw runs it.
 */
#define CFI_MAX_REG 1023

static const __u8 *skip_leb(const __u8 *p, const __u8 *end, __u64 *v)
{
	__u64 r = 0;
	unsigned int shift = 0;

	while (p && p < end) { /* p NULL: an operand before ran past the end */
		__u8 b = *p++;

		if (shift < 64)
			r |= (__u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (v)
				*v = shift > 70 ? ~0ULL : r; /* more than 10 bytes: too large */
			return p;
		}
	}
	return NULL;
}

/* Bytes of a pointer of encoding @enc, or 0 when not of a fixed size. */
static unsigned int enc_size(__u8 enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/*
 * Whether the CFA instructions [p, end) name no register above
 * CFI_MAX_REG. @loc: the size of DW_CFA_set_loc's operand. An opcode
 * unknown here ends the check: libdw stops at it too.
 */
static bool cfa_regs_ok(const __u8 *p, const __u8 *end, unsigned int loc)
{
	while (p && p < end) {
		__u8 op = *p++;
		__u64 reg = 0, n = 0;

		if ((op >> 6) == 2) { /* DW_CFA_offset: its register is in op */
			p = skip_leb(p, end, NULL);
			continue;
		}
		if (op >> 6) /* DW_CFA_advance_loc, DW_CFA_restore */
			continue;
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			continue;
		case DW_CFA_set_loc:
			p += loc;
			continue;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			p += op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
			continue;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			p = skip_leb(p, end, NULL);
			continue;
		case DW_CFA_def_cfa_expression:
			p = skip_leb(p, end, &n);
			if (p && n > (__u64)(end - p))
				return false;
			p = p ? p + n : p;
			continue;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			p = skip_leb(p, end, &reg);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
			p = skip_leb(p, end, &reg);
			p = skip_leb(p, end, NULL);
			break;
		case DW_CFA_register:
			p = skip_leb(p, end, &reg);
			p = skip_leb(p, end, &n);
			if (n > CFI_MAX_REG)
				return false;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			p = skip_leb(p, end, &reg);
			p = skip_leb(p, end, &n);
			if (p && n > (__u64)(end - p))
				return false;
			p = p ? p + n : p;
			break;
		default:
			return true;
		}
		if (reg > CFI_MAX_REG)
			return false;
	}
	return true;
}

/* What an FDE's instructions start after, from its CIE. */
struct cie_info {
	unsigned int loc;  /* bytes of initial_location and of address_range */
	bool aug_len;      /* an augmentation length (and data) follows them */
};

/* @cie's info, false when its FDEs cannot be read here (a pointer of no fixed size). */
static bool cie_info(const Dwarf_CIE *cie, bool eh, struct cie_info *ci)
{
	const __u8 *d = cie->augmentation_data, *dend = d + cie->augmentation_data_size;
	const char *a = cie->augmentation;

	ci->loc = 8;
	ci->aug_len = a && a[0] == 'z';
	if (!eh || !ci->aug_len)
		return true;
	for (a++; *a; a++) {
		if (*a == 'R' || *a == 'L') {
			if (d >= dend)
				return false;
			if (*a == 'R' && !(ci->loc = enc_size(*d)))
				return false;
			d++;
		} else if (*a == 'P') {
			unsigned int n;

			if (d >= dend || !(n = enc_size(*d)))
				return false;
			d += 1 + n;
		} else if (*a != 'S' && *a != 'B') {
			return false;
		}
	}
	return true;
}

/*
 * The next entry of the CFI section @data (.eh_frame if @eh) from *@off,
 * past those libdw cannot read, into @e, its offset into *@at, and *@off
 * past it: true, or false at the section's end.
 */
static bool next_cfi_entry(const unsigned char *ident, Elf_Data *data, bool eh, Dwarf_Off *off,
			   Dwarf_Off *at, Dwarf_CFI_Entry *e)
{
	for (;;) {
		Dwarf_Off next;
		int ret = dwarf_next_cfi(ident, data, eh, *off, &next, e);

		if (ret > 0 || (ret < 0 && (next == (Dwarf_Off)-1 || next <= *off)))
			return false;
		*at = *off;
		*off = next;
		if (!ret)
			return true;
	}
}

/*
 * Whether every CIE and FDE of the CFI section @data (.eh_frame if @eh)
 * names registers libdw can afford (CFI_MAX_REG). An entry libdw cannot
 * read is no matter: it does not run it.
 */
static bool cfi_regs_ok(const unsigned char *ident, Elf_Data *data, bool eh)
{
	struct hmap cies = {};
	bool ok = true;
	void *old;

	for (int pass = 0; pass < 2 && ok; pass++) {
		Dwarf_Off off = 0, at;
		Dwarf_CFI_Entry e;

		while (ok && next_cfi_entry(ident, data, eh, &off, &at, &e)) {
			const struct cie_info *ci;
			const __u8 *p;
			__u64 n;

			if (dwarf_cfi_cie_p(&e) && pass == 0) {
				struct cie_info *c = malloc(sizeof(*c));

				ok = c && cie_info(&e.cie, eh, c) &&
				     e.cie.return_address_register <= CFI_MAX_REG &&
				     cfa_regs_ok(e.cie.initial_instructions,
						 e.cie.initial_instructions_end, c->loc) &&
				     !hmap__put(&cies, at + 1, 0, c, &old);
				if (!ok)
					free(c);
			} else if (!dwarf_cfi_cie_p(&e) && pass == 1) {
				ci = hmap__get(&cies, e.fde.CIE_pointer + 1, 0);
				p = e.fde.start + 2 * (ci ? ci->loc : 0);
				if (ci && ci->aug_len && p <= e.fde.end) {
					p = skip_leb(p, e.fde.end, &n);
					p = p && n <= (__u64)(e.fde.end - p) ? p + n : NULL;
				}
				/* an FDE of no CIE read here: libdw finds none either */
				ok = !ci || !p || p > e.fde.end || cfa_regs_ok(p, e.fde.end, ci->loc);
			}
		}
	}
	for (size_t i = 0; i < cies.cap; i++)
		free(cies.slots[i].val);
	hmap__clear(&cies);
	return ok;
}

/*
 * The data of section @name of a 64-bit ELF, or NULL (also for a section
 * with no bytes in the file, SHT_NOBITS: libdw would read through its NULL
 * buffer).
 */
static Elf_Data *section_data(Elf *elf, const char *name, __u64 *addr)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (!ident || ident[EI_CLASS] != ELFCLASS64 || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (addr)
				*addr = sh.sh_addr;
			return d && d->d_buf && d->d_size ? d : NULL;
		}
	}
	return NULL;
}

/*
 * The FDE start addresses of .debug_frame (which has no sorted index):
 * Go writes its code's CFI only there. malloc'd and sorted.
 */
static int debug_frame_starts(Elf *elf, __u64 **out, size_t *nr)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	/* dwarf_begin_elf() has decompressed it in place, if it was */
	Elf_Data *data = section_data(elf, ".debug_frame", NULL);
	Dwarf_Off off = 0, at;
	Dwarf_CFI_Entry e;
	size_t cap = 0;

	*out = NULL;
	*nr = 0;
	if (!data)
		return -ENOENT;
	if (!cfi_regs_ok(ident, data, false))
		return -EBADMSG;
	while (next_cfi_entry(ident, data, false, &off, &at, &e)) {
		__u64 loc;

		if (dwarf_cfi_cie_p(&e) || e.fde.end - e.fde.start < 16)
			continue;
		memcpy(&loc, e.fde.start, sizeof(loc)); /* initial_location: an address */
		if (*nr == cap) {
			__u64 *n = realloc(*out, (cap = cap ? cap * 2 : 1024) * sizeof(*n));

			if (!n) {
				free(*out);
				*out = NULL;
				return -ENOMEM;
			}
			*out = n;
		}
		(*out)[(*nr)++] = loc;
	}
	if (!*nr)
		return -ENOENT; /* *out may be NULL: no qsort() of it */
	qsort(*out, *nr, sizeof(**out), cmp_u64);
	return 0;
}

/*
 * The code bytes at addresses [@at, @end) of @elf, all in one executable
 * section; NULL where no such section holds them.
 */
static const __u8 *code_bytes(Elf *elf, __u64 at, __u64 end)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (at < end && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || at < sh.sh_addr ||
		    end - sh.sh_addr > sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const __u8 *)d->d_buf + (at - sh.sh_addr);
	}
	return NULL;
}

/*
 * Whether the @n bytes at @p are `mov $imm32, %eax; syscall`, then only the
 * test of its result and jumps on it (jl, jz), then ret, its last byte: none
 * of it moves rsp. glibc's clone() and clone3() after their FDE's end.
 */
static bool syscall_then_ret(const __u8 *p, size_t n)
{
	size_t i = 7;

	if (n < 8 || p[0] != 0xb8 || p[5] != 0x0f || p[6] != 0x05)
		return false;
	while (i < n) {
		if (n - i >= 3 && p[i] == 0x48 && p[i + 1] == 0x85 && p[i + 2] == 0xc0)
			i += 3; /* test %rax, %rax */
		else if (n - i >= 2 && (p[i] == 0x7c || p[i] == 0x74))
			i += 2; /* jl, jz: rel8 */
		else if (n - i >= 6 && p[i] == 0x0f && (p[i + 1] == 0x8c || p[i + 1] == 0x84))
			i += 6; /* jl, jz: rel32 */
		else
			return p[i] == 0xc3 && i + 1 == n;
	}
	return false;
}

/*
 * Rows [@first, @nr) of @elf: a stretch without CFI that starts at a syscall
 * where an FDE ends with nothing pushed (CFA = rsp + 8, rbp where it was),
 * the FDE's last instruction a mov to eax, and that runs to a ret just
 * before the next FDE (syscall_then_ret()), is a WPROF_CFA_SYSCALL row.
 */
static void syscall_rows(Elf *elf, struct wprof_unwind_row *rows, size_t first, size_t nr,
			 __u64 base)
{
	for (size_t i = first + 1; i + 1 < nr; i++) {
		const struct wprof_unwind_row *prev = &rows[i - 1];
		__u64 at = base + rows[i].pc, end = base + rows[i + 1].pc;
		const __u8 *code;

		if (rows[i].kind != WPROF_CFA_NONE || prev->kind != WPROF_CFA_SP ||
		    prev->cfa_off != 8 || prev->fp_off8 || end <= at || end - at > 32 ||
		    at < base + prev->pc + 5)
			continue;
		code = code_bytes(elf, at - 5, end);
		if (code && syscall_then_ret(code, end - at + 5)) {
			rows[i].kind = WPROF_CFA_SYSCALL;
			rows[i].cfa_off = 8;
		}
	}
}

/*
 * Merge rows @b under @a: where @a has no CFI (a WPROF_CFA_NONE row, or
 * before its first row), @b's rule holds.
 */
static int merge_rows(const struct wprof_unwind_row *a, size_t na,
		      const struct wprof_unwind_row *b, size_t nb,
		      struct wprof_unwind_row **rows, size_t *nr, size_t *cap)
{
	size_t i = 0, j = 0, first = *nr;
	struct wprof_unwind_row none = { .kind = WPROF_CFA_NONE }, ra = none, rb = none, out;
	int err = 0;

	while (!err && (i < na || j < nb)) {
		__u32 pc;

		if (j >= nb || (i < na && a[i].pc <= b[j].pc))
			pc = a[i].pc;
		else
			pc = b[j].pc;
		while (i < na && a[i].pc == pc)
			ra = a[i++];
		while (j < nb && b[j].pc == pc)
			rb = b[j++];
		out = ra.kind != WPROF_CFA_NONE ? ra : rb;
		out.pc = pc;
		err = cfirows__push(rows, nr, cap, first, &out);
	}
	return err;
}

/* See cfirows__build(); @libdw: every row of .eh_frame from libdw (the reference). */
static int build(Elf *elf, struct wprof_unwind_row **rows, size_t *nr, size_t *cap, __u64 *base,
		 bool libdw)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct wprof_unwind_row *eh = NULL, *dbg = NULL;
	size_t neh = 0, ceh = 0, ndbg = 0, cdbg = 0, n_eh_fde = 0, n_dbg_fde = 0, first = *nr;
	__u64 *eh_starts = NULL, *eh_fdes = NULL, *dbg_starts = NULL, eh_addr = 0;
	Dwarf_CFI *eh_cfi = NULL, *dbg_cfi = NULL;
	Elf_Data *eh_data = NULL;
	Dwarf *dw = NULL;
	bool refused = false;
	int err = 0;

	/*
	 * .eh_frame found by its section, as dwarf_getcfi_elf() finds it
	 * first; without one (no section headers), not used at all.
	 */
	if (!fde_starts(elf, &eh_starts, &eh_fdes, &n_eh_fde) && n_eh_fde &&
	    (eh_data = section_data(elf, ".eh_frame", &eh_addr))) {
		if (!cfi_regs_ok(ident, eh_data, true))
			refused = true;
		else if (libdw && !(eh_cfi = dwarf_getcfi_elf(elf)))
			eh_data = NULL;
	} else {
		eh_data = NULL;
	}
	/* code with no .eh_frame of its own may still have .debug_frame (Go) */
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw && !(err = debug_frame_starts(elf, &dbg_starts, &n_dbg_fde)))
		dbg_cfi = dwarf_getcfi(dw);
	refused |= err == -EBADMSG;
	/* a file whose CFI is refused in part is not trusted in the rest */
	if (refused || (!eh_data && !dbg_cfi)) {
		err = refused ? -EBADMSG : -ENOENT;
		goto out;
	}
	err = 0;
	if (eh_data && eh_starts[0] < *base)
		*base = eh_starts[0];
	if (dbg_cfi && dbg_starts[0] < *base)
		*base = dbg_starts[0];
	if (eh_cfi)
		err = rows_of(eh_cfi, eh_starts, n_eh_fde, *base, &eh, &neh, &ceh);
	else if (eh_data)
		err = ehrows__build(ident, eh_data, eh_addr, eh_starts, eh_fdes, n_eh_fde, *base,
				    &eh, &neh, &ceh);
	if (!err && dbg_cfi)
		err = rows_of(dbg_cfi, dbg_starts, n_dbg_fde, *base, &dbg, &ndbg, &cdbg);
	if (!err && !ndbg && !*rows) {
		/* nothing to merge, nothing to append to: the rows as they are */
		*rows = eh;
		*nr = neh;
		*cap = ceh;
		eh = NULL;
	} else if (!err) {
		err = merge_rows(eh, neh, dbg, ndbg, rows, nr, cap);
	}
	if (err)
		*nr = first;
	else
		syscall_rows(elf, *rows, first, *nr, *base);
out:
	if (eh_cfi)
		dwarf_cfi_end(eh_cfi);
	if (dw)
		dwarf_end(dw);
	free(eh);
	free(dbg);
	free(eh_starts);
	free(eh_fdes);
	free(dbg_starts);
	return err;
}

int cfirows__build(Elf *elf, struct wprof_unwind_row **rows, size_t *nr, size_t *cap, __u64 *base)
{
	return build(elf, rows, nr, cap, base, false);
}

int cfirows__build_libdw(Elf *elf, struct wprof_unwind_row **rows, size_t *nr, size_t *cap,
			 __u64 *base)
{
	return build(elf, rows, nr, cap, base, true);
}
