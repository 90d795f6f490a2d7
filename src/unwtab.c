// SPDX-License-Identifier: GPL-2.0-only
/*
 * From .eh_frame to rows the BPF walk can follow. libdw interprets the CFI
 * (dwarf_cfi_addrframe(): the rules in force at an address, and the range
 * they hold for); .eh_frame_hdr's sorted table says where each FDE starts,
 * and so where code without CFI lies between them (a WPROF_CFA_NONE row:
 * frame-pointer steps there). Rules are reduced to what x86-64 compilers
 * emit: CFA = rsp or rbp + offset, return address at CFA - 8, rbp saved at
 * CFA + n * 8 or unchanged; the PLT's expression; the signal trampoline.
 * Anything else ends a walk there (WPROF_CFA_BAD), it is never guessed.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "hmap.h"
#include "proclive.h"
#include "procmaps.h"
#include "unwtab.h"
#include "util.h"
#include "zsects.h"

#define REG_FP 6  /* rbp */
#define REG_SP 7  /* rsp */
#define REG_RA 16 /* the return address column */
#define MAX_LOADS 8
#define PAGE_SIZE_BYTES 4096

/* One executable file (identified as /proc/PID/maps names it: device and inode). */
struct tab_file {
	__u64 dev, ino;
	bool vdso;
	int err;          /* 0, or why it has no rows */
	__u64 base;       /* ELF address of row pc 0 */
	__u32 page_first, page_nr; /* the page index, right before the rows */
	__u32 row_first, row_nr;
	struct { __u64 off, vaddr, filesz; bool exec; } loads[MAX_LOADS]; /* PT_LOAD segments */
	int nr_loads;
};

struct tab_proc {
	__u32 pid;
	__u64 start_ticks;
	bool sent;
	struct wprof_proc_maps pm;
};

struct unwtab {
	struct tab_file *files;
	size_t nr_files;
	struct wprof_unwind_row *rows; /* every file's, in user memory */
	size_t nr_rows, cap_rows;
	struct tab_proc *procs;
	size_t nr_procs;
	/* bound kernel maps */
	struct wprof_unwind_row *krows;
	__u32 max_krows;
	size_t nr_krows; /* rows copied to krows */
	int procs_fd;
	struct unwtab_stats st;
};

struct unwtab *unwtab__new(void)
{
	struct unwtab *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->procs_fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(u);
		errno = EINVAL;
		return NULL;
	}
	return u;
}

void unwtab__free(struct unwtab *u)
{
	if (!u)
		return;
	free(u->files);
	free(u->rows);
	free(u->procs);
	free(u);
}

/* An encoded pointer of .eh_frame_hdr: only the encodings linkers use there. */
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

/* The FDE start addresses of .eh_frame_hdr's table (sorted), malloc'd. */
static int fde_starts(Elf *elf, __u64 **out, size_t *nr)
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
	if (!*out)
		return -ENOMEM;
	*nr = 0;
	for (__u64 i = 0; i < count; i++) {
		__u64 loc, fde;

		if (read_encoded(p, end, table_enc, hdr_vaddr, &loc, &p) ||
		    read_encoded(p, end, table_enc, hdr_vaddr, &fde, &p))
			break;
		if (*nr && loc <= (*out)[*nr - 1])
			continue; /* not sorted: keep what is */
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

static int push_row(struct wprof_unwind_row **rows, size_t *nr, size_t *cap, size_t first,
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
			err = push_row(rows, nr, cap, first, &row);
			if (end <= pc)
				break;
			pc = end;
		}
		/* code between this FDE's end and the next FDE has no CFI */
		if (!err && pc < next && pc - base <= 0xffffffffULL) {
			row = (struct wprof_unwind_row){ .pc = pc - base, .kind = WPROF_CFA_NONE };
			err = push_row(rows, nr, cap, first, &row);
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
static Elf_Data *section_data(Elf *elf, const char *name)
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
	Elf_Data *data = section_data(elf, ".debug_frame");
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
		err = push_row(rows, nr, cap, first, &out);
	}
	return err;
}

int unwtab__build_rows(Elf *elf, struct wprof_unwind_row **rows, size_t *nr, size_t *cap,
		       __u64 *base)
{
	struct wprof_unwind_row *eh = NULL, *dbg = NULL;
	size_t neh = 0, ceh = 0, ndbg = 0, cdbg = 0, n_eh_fde = 0, n_dbg_fde = 0, first = *nr;
	__u64 *eh_starts = NULL, *dbg_starts = NULL;
	Dwarf_CFI *eh_cfi = NULL, *dbg_cfi = NULL;
	Elf_Data *eh_data;
	Dwarf *dw = NULL;
	bool refused = false;
	int err = 0;

	/*
	 * .eh_frame found by its section, as dwarf_getcfi_elf() finds it
	 * first; without one (no section headers), not used at all.
	 */
	if (!fde_starts(elf, &eh_starts, &n_eh_fde) && n_eh_fde &&
	    (eh_data = section_data(elf, ".eh_frame"))) {
		if (cfi_regs_ok((const unsigned char *)elf_getident(elf, NULL), eh_data, true))
			eh_cfi = dwarf_getcfi_elf(elf);
		else
			refused = true;
	}
	/* code with no .eh_frame of its own may still have .debug_frame (Go) */
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw && !(err = debug_frame_starts(elf, &dbg_starts, &n_dbg_fde)))
		dbg_cfi = dwarf_getcfi(dw);
	refused |= err == -EBADMSG;
	/* a file whose CFI is refused in part is not trusted in the rest */
	if (refused || (!eh_cfi && !dbg_cfi)) {
		err = refused ? -EBADMSG : -ENOENT;
		goto out;
	}
	err = 0;
	if (eh_cfi && eh_starts[0] < *base)
		*base = eh_starts[0];
	if (dbg_cfi && dbg_starts[0] < *base)
		*base = dbg_starts[0];
	if (eh_cfi)
		err = rows_of(eh_cfi, eh_starts, n_eh_fde, *base, &eh, &neh, &ceh);
	if (!err && dbg_cfi)
		err = rows_of(dbg_cfi, dbg_starts, n_dbg_fde, *base, &dbg, &ndbg, &cdbg);
	if (!err)
		err = merge_rows(eh, neh, dbg, ndbg, rows, nr, cap);
	if (err)
		*nr = first;
out:
	if (eh_cfi)
		dwarf_cfi_end(eh_cfi);
	if (dw)
		dwarf_end(dw);
	free(eh);
	free(dbg);
	free(eh_starts);
	free(dbg_starts);
	return err;
}

static void read_loads(Elf *elf, struct tab_file *f)
{
	size_t nphdr;

	if (elf_getphdrnum(elf, &nphdr))
		return;
	for (size_t i = 0; i < nphdr && f->nr_loads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nr_loads].off = ph.p_offset;
		f->loads[f->nr_loads].vaddr = ph.p_vaddr;
		f->loads[f->nr_loads].filesz = ph.p_filesz;
		f->loads[f->nr_loads].exec = ph.p_flags & PF_X;
		f->nr_loads++;
	}
}

/*
 * Where a thread's stack begins in code that has no CFI to say so: Go's
 * runtime (frame pointers, no .eh_frame) starts goroutines under goexit and
 * system stacks under mstart (and mcall, morestack, which switch to them).
 * Walks stop there, complete, instead of reading on past the stack's start.
 */
static const char *const outermost_syms[] = {
	"runtime.goexit", "runtime.mstart", "runtime.mcall", "runtime.morestack",
	"runtime.rt0_go",
};

static bool is_outermost(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(outermost_syms); i++) {
		size_t n = strlen(outermost_syms[i]);

		if (!strncmp(name, outermost_syms[i], n) &&
		    (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

static int cmp_row(const void *a, const void *b)
{
	const struct wprof_unwind_row *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/*
 * Mark the outermost functions of @elf's symbol table END in the rows
 * [first, *nr): each range [start, end) becomes one END row, followed at end
 * by the rule that held there before.
 */
static int mark_outermost(Elf *elf, struct unwtab *u, size_t first, __u64 base)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			struct wprof_unwind_row end = { .kind = WPROF_CFA_END }, after;
			const char *name;
			GElf_Sym sym;
			size_t k;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || sym.st_value < base ||
			    sym.st_value + sym.st_size - base > 0xffffffffULL)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !is_outermost(name))
				continue;
			/* the rule in force at the function's end goes on after it */
			after = (struct wprof_unwind_row){ .kind = WPROF_CFA_NONE };
			for (k = first; k < u->nr_rows && u->rows[k].pc <= sym.st_value + sym.st_size - base;
			     k++)
				after = u->rows[k];
			after.pc = sym.st_value + sym.st_size - base;
			end.pc = sym.st_value - base;
			/* drop the rows inside, add the two */
			for (k = first; k < u->nr_rows;) {
				if (u->rows[k].pc >= end.pc && u->rows[k].pc <= after.pc)
					u->rows[k] = u->rows[--u->nr_rows];
				else
					k++;
			}
			if (push_row(&u->rows, &u->nr_rows, &u->cap_rows, u->nr_rows, &end) ||
			    push_row(&u->rows, &u->nr_rows, &u->cap_rows, u->nr_rows, &after))
				return -ENOMEM;
			qsort(&u->rows[first], u->nr_rows - first, sizeof(*u->rows), cmp_row);
		}
	}
	return 0;
}

/*
 * Put the page index of @f's rows before them (see struct wprof_exec_map):
 * entry p holds the index of the row in force at p << WPROF_PAGE_SHIFT.
 */
static int add_pages(struct unwtab *u, struct tab_file *f)
{
	__u32 np = (u->rows[f->row_first + f->row_nr - 1].pc >> WPROF_PAGE_SHIFT) + 1, k = 0;
	struct wprof_unwind_row *rows;

	while (u->nr_rows + np > u->cap_rows) {
		rows = realloc(u->rows, u->cap_rows * 2 * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		u->rows = rows;
		u->cap_rows *= 2;
	}
	rows = &u->rows[f->row_first];
	memmove(rows + np, rows, f->row_nr * sizeof(*rows));
	f->page_first = f->row_first;
	f->page_nr = np;
	f->row_first += np;
	u->nr_rows += np;
	for (__u32 p = 0; p < np; p++) {
		__u64 at = (__u64)p << WPROF_PAGE_SHIFT;

		while (k < f->row_nr && rows[np + k].pc <= at)
			k++;
		rows[p] = (struct wprof_unwind_row){ .pc = k ? f->row_first + k - 1 : WPROF_NO_ROW };
	}
	return 0;
}

static void build_file(struct unwtab *u, struct tab_file *f, Elf *elf)
{
	struct timespec t0, t1;
	size_t before = u->nr_rows;
	int guard;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	read_loads(elf, f);
	f->base = ~0ULL;
	for (int i = 0; i < f->nr_loads; i++)
		if (f->loads[i].vaddr < f->base)
			f->base = f->loads[i].vaddr;
	/* libdw's DWARF reader would inflate every compressed section: only .debug_frame is read */
	guard = zsects__guard(elf, ZSECTS_CFI);
	u->st.files_inflate_refused += guard > 0; /* walked by .eh_frame alone */
	f->err = guard < 0 ? -ENOENT :
			     unwtab__build_rows(elf, &u->rows, &u->nr_rows, &u->cap_rows, &f->base);
	if (f->err == -EBADMSG) { /* refused: counted, and walked as code without CFI */
		u->st.files_cfi_refused++;
		f->err = -ENOENT;
	}
	/* without .eh_frame, frame-pointer steps, but Go's stacks still end */
	if (f->err == -ENOENT && f->nr_loads)
		f->err = 0;
	if (!f->err)
		f->err = mark_outermost(elf, u, before, f->base);
	if (!f->err && u->nr_rows == before) {
		/* no rows at all: one NONE row keeps the map entry meaningful */
		struct wprof_unwind_row none = { .pc = 0, .kind = WPROF_CFA_NONE };

		f->err = push_row(&u->rows, &u->nr_rows, &u->cap_rows, before, &none);
	}
	f->row_first = before;
	f->row_nr = f->err ? 0 : u->nr_rows - before;
	if (f->row_nr && add_pages(u, f)) {
		u->nr_rows = before;
		f->row_nr = 0;
		f->err = -ENOMEM;
	}
	if (f->err)
		u->st.files_no_cfi++;
	else
		u->st.files++;
	u->st.rows = u->nr_rows;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	u->st.build_ns += (t1.tv_sec - t0.tv_sec) * NSEC_PER_SEC + t1.tv_nsec - t0.tv_nsec;
}

/* Copy new rows to the kernel, if they fit; a file that does not fit has none. */
static void send_rows(struct unwtab *u, struct tab_file *f)
{
	__u32 end = f->row_first + f->row_nr;

	if (!u->krows || !f->row_nr || end <= u->nr_krows)
		return;
	if (end > u->max_krows) {
		f->row_nr = 0;
		f->err = -ENOSPC;
		u->st.files_no_room++;
		return;
	}
	memcpy(&u->krows[f->page_first], &u->rows[f->page_first],
	       (end - f->page_first) * sizeof(*u->rows));
	u->nr_krows = end;
}

/* The file mapped at @m in @pid, its rows built the first time it is seen. */
static struct tab_file *file_of(struct unwtab *u, int pid, const struct proc_map *m)
{
	__u64 dev = (__u64)m->dev_major << 32 | m->dev_minor;
	bool vdso = m->path && !strcmp(m->path, "[vdso]");
	struct tab_file *f;
	Elf *elf = NULL;
	void *image = NULL;
	size_t len = 0;
	int fd = -1;

	for (size_t i = 0; i < u->nr_files; i++) {
		f = &u->files[i];
		if (vdso ? f->vdso : (!f->vdso && f->dev == dev && f->ino == m->inode))
			return f;
	}
	f = realloc(u->files, (u->nr_files + 1) * sizeof(*f));
	if (!f)
		return NULL;
	u->files = f;
	f = &u->files[u->nr_files++];
	memset(f, 0, sizeof(*f));
	f->dev = dev;
	f->ino = m->inode;
	f->vdso = vdso;
	f->err = -ENOENT;
	if (vdso) {
		image = procmaps__copy_vdso(pid, m, &len);
		if (image)
			elf = elf_memory(image, len);
	} else {
		fd = procmaps__open_file(pid, m);
		if (fd >= 0)
			elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF)
		build_file(u, f, elf);
	else
		u->st.files_no_cfi++;
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(image);
	return f;
}

/* The ELF address of @m's start: which PT_LOAD maps @m's file offset. */
static bool map_vaddr(const struct tab_file *f, const struct proc_map *m, __u64 *vaddr)
{
	/*
	 * The kernel maps a segment from its offset rounded down to a page, and
	 * that page may also hold the end of the segment before it (lld lays
	 * segments out so): only the executable segment is the code's.
	 */
	for (int i = 0; i < f->nr_loads; i++) {
		__u64 page_off = f->loads[i].off & ~(__u64)(PAGE_SIZE_BYTES - 1);

		if (f->loads[i].exec && m->pgoff >= page_off &&
		    m->pgoff < f->loads[i].off + f->loads[i].filesz) {
			*vaddr = (f->loads[i].vaddr & ~(__u64)(PAGE_SIZE_BYTES - 1)) +
				 (m->pgoff - page_off);
			return true;
		}
	}
	return false;
}

static struct tab_proc *proc_get(struct unwtab *u, __u32 pid)
{
	struct tab_proc *p;

	for (size_t i = 0; i < u->nr_procs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	p = realloc(u->procs, (u->nr_procs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	u->procs = p;
	p = &u->procs[u->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static int send_proc(struct unwtab *u, struct tab_proc *p)
{
	if (u->procs_fd < 0)
		return 0;
	if (bpf_map_update_elem(u->procs_fd, &p->pid, &p->pm, BPF_ANY)) {
		u->st.procs_failed++;
		return -errno;
	}
	p->sent = true;
	u->st.procs++;
	return 0;
}

/* What the kernel counts in mm->exec_vm: executable, not writable, not the stack. */
static bool counts_as_exec(const struct proc_map *m)
{
	return m->perms[2] == 'x' && m->perms[1] != 'w' &&
	       !(m->path && !strcmp(m->path, "[vsyscall]"));
}

void unwtab__gone(struct unwtab *u, int pid)
{
	/*
	 * Gone before we could read it: the entry the BPF side made at its
	 * fork (a copy of its parent's) is nobody's now. Left there, the
	 * entries of short-lived processes would fill the map under churn.
	 */
	if (u && u->procs_fd >= 0)
		bpf_map_delete_elem(u->procs_fd, &pid);
}

int unwtab__add_pid(struct unwtab *u, int pid)
{
	struct proc_maps maps = {};
	__u64 ticks;
	int err;

	err = procmaps__read_proc(pid, &ticks, &maps);
	if (err == -ESRCH)
		unwtab__gone(u, pid);
	if (err)
		return err;
	err = unwtab__add_maps(u, pid, ticks, &maps);
	procmaps__free(&maps);
	return err;
}

int unwtab__add_maps(struct unwtab *u, int pid, __u64 ticks, const struct proc_maps *maps)
{
	struct tab_proc *p = proc_get(u, pid);

	if (!p)
		return -ENOMEM;
	memset(&p->pm, 0, sizeof(p->pm));
	p->start_ticks = p->pm.start_ticks = ticks;
	for (size_t i = 0, skipped = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];
		struct wprof_exec_map *e = &p->pm.maps[p->pm.nr];
		struct tab_file *f = NULL;
		__u64 vaddr;

		if (m->perms[2] != 'x' || (m->path && !strcmp(m->path, "[vsyscall]")))
			continue;
		/* writable code (JIT) is listed, for frame-pointer steps, but not counted */
		if (counts_as_exec(m))
			p->pm.exec_vm += (m->end - m->start) / PAGE_SIZE_BYTES;
		if (p->pm.nr == WPROF_MAX_EXEC_MAPS) {
			u->st.maps_truncated += !skipped++;
			continue;
		}
		e->start = m->start;
		e->end = m->end;
		if (m->path && (m->path[0] != '[' || !strcmp(m->path, "[vdso]")))
			f = file_of(u, pid, m);
		if (f && !f->err) {
			send_rows(u, f);
			if (f->row_nr && map_vaddr(f, m, &vaddr)) {
				e->base = m->start - vaddr + f->base;
				e->row_first = f->row_first;
				e->row_nr = f->row_nr;
				e->page_first = f->page_first;
				e->page_nr = f->page_nr;
			}
		}
		p->pm.nr++;
	}
	return send_proc(u, p);
}

void unwtab__prune(struct unwtab *u, struct proclive *live)
{
	for (size_t i = 0; i < u->nr_procs;) {
		struct tab_proc *p = &u->procs[i];

		if (proclive__alive(live, p->pid, p->start_ticks)) {
			i++;
			continue;
		}
		if (u->procs_fd >= 0)
			bpf_map_delete_elem(u->procs_fd, &p->pid);
		/* the last takes its place: an entry is kilobytes, and most live on */
		*p = u->procs[--u->nr_procs];
	}
}

size_t unwtab__nr_rows(const struct unwtab *u)
{
	return u->nr_rows;
}

int unwtab__bind(struct unwtab *u, struct wprof_unwind_row *rows, __u32 max_rows, int procs_fd)
{
	int err = 0;

	u->krows = rows;
	u->max_krows = max_rows;
	u->procs_fd = procs_fd;
	for (size_t i = 0; i < u->nr_files; i++)
		send_rows(u, &u->files[i]);
	for (size_t i = 0; i < u->nr_procs; i++) {
		struct tab_proc *p = &u->procs[i];

		/* rows that did not fit: frame-pointer steps in that code */
		for (__u32 k = 0; k < p->pm.nr; k++) {
			struct wprof_exec_map *e = &p->pm.maps[k];

			if (e->row_nr && e->row_first + e->row_nr > max_rows)
				e->row_nr = 0;
		}
		if (!err)
			err = send_proc(u, p);
	}
	return err;
}

void unwtab__stats(const struct unwtab *u, struct unwtab_stats *st)
{
	*st = u->st;
}
