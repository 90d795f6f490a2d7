// SPDX-License-Identifier: GPL-2.0-only
/*
 * .eh_frame's FDEs run once each. libdw's dwarf_cfi_addrframe() answers for
 * one address: it runs the CIE's and the FDE's instructions up to it, in a
 * frame it allocates, and finds the FDE and CIE in search trees first; asked
 * for every range of every function of cc1 (500,000 rows), that was half a
 * second of CPU, most of wprof's own CPU under a build. Here each CIE's
 * initial rules are computed once, and each FDE's instructions are run once,
 * a row made at each advance.
 *
 * The rules are kept as libdw states them, and reduced to a row as
 * classify() in cfirows.c reduces libdw's answers (test_unwtab compares the
 * two on whole files): only the CFA, the return address (register 16) and
 * the frame pointer (rbp, register 6) matter to the walk. A register with
 * no rule is unchanged for rbp (the x86-64 ABI's callee-saved rule) and
 * undefined for the return address: the outermost frame, as libdw says.
 * An instruction that is not known or not allowed ends the FDE's rows there
 * (the code after it has no CFI), as libdw fails there. Where FDEs overlap
 * (a broken file), an address has the rules of the FDE the index names for
 * it; libdw's then depend on which FDE it looked up before.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfirows.h"
#include "ehrows.h"
#include "hmap.h"

#define REG_FP 6
#define REG_SP 7
#define REG_RA 16
#define REG_RDI 5
#define MAX_REMEMBER 64

enum rule_how {
	R_UNSPEC = 0, /* no rule: rbp unchanged, the return address undefined */
	R_UNDEF,
	R_SAME,
	R_OFFSET,     /* saved at CFA + off */
	R_OTHER,      /* a rule the walk cannot follow (val_offset, register, ...) */
	R_EXPR,       /* saved where an expression says (expr, len) */
	R_RDI,        /* in register rdi (DW_CFA_register) */
};

struct rule {
	__u8 how;
	__s64 off;
	const __u8 *expr;
	__u64 len;
};

enum cfa_how {
	CFA_UNSET = 0,
	CFA_REG,  /* reg + off */
	CFA_EXPR, /* an expression */
	CFA_BAD,  /* a register or offset changed with no register rule in force */
};

struct state {
	__u8 cfa_how;
	__u64 cfa_reg;
	__s64 cfa_off;
	const __u8 *cfa_expr;
	__u64 cfa_len;
	struct rule fp, ra;
};

/* A CIE as its FDEs need it. */
struct cie {
	__u64 caf;     /* code alignment factor */
	__s64 daf;     /* data alignment factor */
	__u64 ra_reg;
	__u8 fde_enc;  /* encoding of the FDEs' addresses */
	bool signal;   /* 'S': the signal trampoline */
	bool aug_len;  /* 'z': FDEs have augmentation data */
	bool ok;       /* usable: else its FDEs have no rows */
	struct state init;
};

/* Where a run is, and where its rows go. */
struct run {
	const struct cie *cie;
	__u64 section_vaddr;
	const __u8 *section;
	__u64 loc, end, base;
	__u64 lo; /* where the rows start: the FDE's start as the index says */
	struct wprof_unwind_row **rows;
	size_t *nr, *cap, first;
	struct state stack[MAX_REMEMBER];
	int depth;
};

/* a * b as two's complement wraps it: what hostile CFI asks is no undefined behaviour */
static __s64 mul(__s64 a, __s64 b)
{
	return (__s64)((__u64)a * (__u64)b);
}

/*
 * A LEB128 number at @p: its bits in *@v (those past 64 dropped), the bits
 * read in *@shift, its last byte in *@last; the byte after it, or NULL when
 * it runs past @end
 */
static const __u8 *leb(const __u8 *p, const __u8 *end, __u64 *v, unsigned int *shift, __u8 *last)
{
	__u64 r = 0;
	unsigned int n = 0;

	while (p && p < end) {
		__u8 b = *p++;

		if (n < 64)
			r |= (__u64)(b & 0x7f) << n;
		n += 7;
		if (!(b & 0x80)) {
			*v = r;
			*shift = n;
			*last = b;
			return p;
		}
	}
	return NULL;
}

static const __u8 *uleb(const __u8 *p, const __u8 *end, __u64 *v)
{
	unsigned int shift;
	__u8 last;

	return leb(p, end, v, &shift, &last);
}

static const __u8 *sleb(const __u8 *p, const __u8 *end, __s64 *v)
{
	unsigned int shift;
	__u64 r;
	__u8 last;

	p = leb(p, end, &r, &shift, &last);
	if (!p)
		return NULL;
	if (shift < 64 && (last & 0x40))
		r |= ~0ULL << shift;
	*v = (__s64)r;
	return p;
}

/*
 * An encoded pointer at @p (@p's address @at): absolute or pc-relative,
 * of a fixed size. NULL for the others (not in x86-64 .eh_frame).
 */
static const __u8 *read_ptr(const __u8 *p, const __u8 *end, __u8 enc, __u64 at, __u64 *v)
{
	unsigned int n;
	__u64 x = 0;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		n = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		n = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		n = 2;
		break;
	default:
		return NULL;
	}
	if (!p || (size_t)(end - p) < n)
		return NULL;
	memcpy(&x, p, n); /* little-endian, as x86-64 */
	if ((enc & 0x0f) == DW_EH_PE_sdata4)
		x = (__u64)(__s64)(__s32)x;
	else if ((enc & 0x0f) == DW_EH_PE_sdata2)
		x = (__u64)(__s64)(__s16)x;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		x += at;
		break;
	default:
		return NULL;
	}
	*v = x;
	return p + n;
}

/* An expression: the single DW_OP_breg of a CFA, as libdw reads it. */
static bool single_breg(const __u8 *p, __u64 len, __u64 *reg, __s64 *off)
{
	const __u8 *end = p + len;

	if (!len)
		return false;
	if (*p >= DW_OP_breg0 && *p <= DW_OP_breg31) {
		*reg = *p - DW_OP_breg0;
		p = sleb(p + 1, end, off);
	} else if (*p == DW_OP_bregx) {
		p = sleb(uleb(p + 1, end, reg), end, off);
	} else {
		return false;
	}
	return p == end;
}

/* The PLT's CFA expression (see plt_expr() in cfirows.c): its N. */
static bool plt_cfa(const __u8 *p, __u64 len, __u16 *n)
{
	static const __u8 head[] = { DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and };
	static const __u8 tail[] = { DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };

	if (len != sizeof(head) + 1 + sizeof(tail) || memcmp(p, head, sizeof(head)) ||
	    p[sizeof(head)] < DW_OP_lit0 || p[sizeof(head)] > DW_OP_lit31 ||
	    memcmp(p + sizeof(head) + 1, tail, sizeof(tail)))
		return false;
	*n = p[sizeof(head)] - DW_OP_lit0;
	return true;
}

/*
 * Where a rule saves its register, CFA + *off: an offset rule, or an
 * expression of additions to the CFA (libdw puts the CFA first).
 */
static bool saved_off(const struct rule *r, __s64 *off)
{
	const __u8 *p = r->expr, *end;

	*off = r->off;
	if (r->how == R_OFFSET)
		return true;
	if (r->how != R_EXPR)
		return false;
	end = r->expr + r->len;
	*off = 0;
	while (p && p < end) {
		__u64 u = 0;
		__s64 s = 0;

		if (*p == DW_OP_plus_uconst) {
			p = uleb(p + 1, end, &u);
			*off = (__s64)((__u64)*off + u);
		} else if (*p == DW_OP_consts && (p = sleb(p + 1, end, &s)) && p < end &&
			   *p == DW_OP_plus) {
			*off = (__s64)((__u64)*off + (__u64)s);
			p++;
		} else {
			return false;
		}
	}
	return p == end;
}

/* The row of state @s (see classify() in cfirows.c). */
static void classify(const struct cie *c, const struct state *s, struct wprof_unwind_row *row)
{
	__u64 reg = s->cfa_reg;
	__s64 off = s->cfa_off;
	bool breg = s->cfa_how == CFA_REG ||
		    (s->cfa_how == CFA_EXPR && single_breg(s->cfa_expr, s->cfa_len, &reg, &off));

	row->kind = WPROF_CFA_BAD;
	row->cfa_off = 0;
	row->fp_off8 = 0;
	if (breg) {
		if ((reg != REG_SP && reg != REG_FP) || off < 0 || off > 0xffff)
			return;
		row->kind = reg == REG_SP ? WPROF_CFA_SP : WPROF_CFA_FP;
		row->cfa_off = off;
	} else if (s->cfa_how == CFA_UNSET || s->cfa_how == CFA_BAD) {
		return;
	} else if (c->signal) {
		row->kind = WPROF_CFA_SIGNAL;
		return;
	} else if (s->cfa_how == CFA_EXPR && plt_cfa(s->cfa_expr, s->cfa_len, &row->cfa_off)) {
		row->kind = WPROF_CFA_PLT;
		return;
	} else {
		return;
	}
	if (c->ra_reg != REG_RA) {
		row->kind = WPROF_CFA_BAD;
		return;
	}
	if (s->ra.how == R_UNSPEC || s->ra.how == R_UNDEF || s->ra.how == R_SAME) {
		row->kind = WPROF_CFA_END; /* the outermost frame */
		return;
	}
	if (s->ra.how == R_RDI) {
		if (row->kind != WPROF_CFA_SP)
			row->kind = WPROF_CFA_BAD;
		else
			row->kind = WPROF_CFA_RA_RDI;
		if (s->fp.how != R_UNSPEC && s->fp.how != R_UNDEF && s->fp.how != R_SAME)
			row->kind = WPROF_CFA_BAD; /* no such code saves rbp meanwhile */
		return;
	}
	if (!saved_off(&s->ra, &off) || off != -8) {
		row->kind = WPROF_CFA_BAD;
		return;
	}
	if (s->fp.how == R_UNSPEC || s->fp.how == R_UNDEF || s->fp.how == R_SAME)
		return; /* unchanged (callee-saved) */
	if (!saved_off(&s->fp, &off) || off % 8 || off / 8 <= WPROF_FP_LOST || off / 8 > 127)
		row->fp_off8 = WPROF_FP_LOST;
	else
		row->fp_off8 = off / 8;
}

/*
 * The row in force from r->loc on, unless past the FDE's code; before the
 * index's start of the FDE (a file whose index and FDE disagree), from there.
 */
static int emit(struct run *r, const struct state *s)
{
	__u64 at = r->loc > r->lo ? r->loc : r->lo;
	struct wprof_unwind_row row;

	if (at >= r->end)
		return 0;
	if (at < r->base || at - r->base > 0xffffffffULL)
		return -E2BIG;
	classify(r->cie, s, &row);
	row.pc = at - r->base;
	return cfirows__push(r->rows, r->nr, r->cap, r->first, &row);
}

static struct rule *rule_of(struct state *s, __u64 reg)
{
	return reg == REG_FP ? &s->fp : reg == REG_RA ? &s->ra : NULL;
}

/*
 * Run the instructions [p, end) on @s; @r NULL for a CIE's initial ones
 * (no row, no advance). 0 at their end, 1 at one that ends the rows (not
 * known, not allowed, or past the end), or -errno.
 */
static int run(struct run *r, const struct cie *c, const __u8 *p, const __u8 *end,
	       struct state *s)
{
	while (p && p < end) {
		__u8 op = *p++;
		__u64 reg = 0, u = 0, delta = 0;
		__s64 sv = 0;
		struct rule *rl;
		int err;

		if ((op & 0xc0) == DW_CFA_advance_loc) {
			delta = (op & 0x3f) * c->caf;
			goto advance;
		}
		if ((op & 0xc0) == DW_CFA_offset) {
			p = uleb(p, end, &u);
			if ((rl = rule_of(s, op & 0x3f)))
				*rl = (struct rule){ .how = R_OFFSET, .off = mul((__s64)u, c->daf) };
			continue;
		}
		if ((op & 0xc0) == DW_CFA_restore) {
			if (!r)
				return 1;
			if ((rl = rule_of(s, op & 0x3f)))
				*rl = *rule_of((struct state *)&c->init, op & 0x3f);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			continue;
		case DW_CFA_GNU_window_save:
			/* SPARC's: libdw saves register 16 (here the return address) at CFA + 0 */
			s->ra = (struct rule){ .how = R_OFFSET, .off = 0 };
			continue;
		case DW_CFA_set_loc:
			if (!r || !(p = read_ptr(p, end, c->fde_enc, r->section_vaddr +
						 (p - r->section), &u)) || u < r->loc)
				return 1;
			delta = u - r->loc;
			goto advance;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4: {
			unsigned int n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;

			if ((size_t)(end - p) < n)
				return 1;
			memcpy(&u, p, n);
			p += n;
			delta = u * c->caf;
			goto advance;
		}
		case DW_CFA_offset_extended:
			p = uleb(uleb(p, end, &reg), end, &u);
			sv = mul((__s64)u, c->daf);
			goto offset;
		case DW_CFA_offset_extended_sf:
			p = sleb(uleb(p, end, &reg), end, &sv);
			sv = mul(sv, c->daf);
			goto offset;
		case DW_CFA_GNU_negative_offset_extended:
			p = uleb(uleb(p, end, &reg), end, &u);
			sv = mul((__s64)(0 - u), c->daf);
			goto offset;
		case DW_CFA_restore_extended:
			p = uleb(p, end, &reg);
			if (!r)
				return 1;
			if ((rl = rule_of(s, reg)))
				*rl = *rule_of((struct state *)&c->init, reg);
			continue;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
			p = uleb(p, end, &reg);
			if ((rl = rule_of(s, reg)))
				*rl = (struct rule){ .how = op == DW_CFA_undefined ? R_UNDEF : R_SAME };
			continue;
		case DW_CFA_register:
			p = uleb(uleb(p, end, &reg), end, &u);
			if (p && reg == REG_RA && u == REG_RDI) {
				s->ra = (struct rule){ .how = R_RDI };
				continue;
			}
			goto other;
		case DW_CFA_val_offset:
			p = uleb(uleb(p, end, &reg), end, &u);
			goto other;
		case DW_CFA_val_offset_sf:
			p = sleb(uleb(p, end, &reg), end, &sv);
			goto other;
		case DW_CFA_val_expression:
			p = uleb(uleb(p, end, &reg), end, &u);
			if (p && u > (__u64)(end - p))
				return 1;
			p = p ? p + u : p;
			goto other;
		case DW_CFA_expression:
			p = uleb(uleb(p, end, &reg), end, &u);
			if (!p || u > (__u64)(end - p))
				return 1;
			if ((rl = rule_of(s, reg)))
				*rl = (struct rule){ .how = R_EXPR, .expr = p, .len = u };
			p += u;
			continue;
		case DW_CFA_remember_state:
			if (!r || r->depth == MAX_REMEMBER)
				return 1;
			r->stack[r->depth++] = *s;
			continue;
		case DW_CFA_restore_state:
			/* the CFA too: an epilogue in mid-function changes it, then restores */
			if (!r || !r->depth)
				return 1;
			*s = r->stack[--r->depth];
			continue;
		case DW_CFA_def_cfa:
			p = uleb(uleb(p, end, &reg), end, &u);
			s->cfa_how = CFA_REG;
			s->cfa_reg = reg;
			s->cfa_off = (__s64)u;
			continue;
		case DW_CFA_def_cfa_sf:
			p = sleb(uleb(p, end, &reg), end, &sv);
			s->cfa_how = CFA_REG;
			s->cfa_reg = reg;
			s->cfa_off = mul(sv, c->daf);
			continue;
		case DW_CFA_def_cfa_register:
			p = uleb(p, end, &reg);
			/* no register rule to change: the CFA is unknown, as libdw says */
			if (s->cfa_how != CFA_REG)
				s->cfa_how = CFA_BAD;
			s->cfa_reg = reg;
			continue;
		case DW_CFA_def_cfa_offset:
			p = uleb(p, end, &u);
			if (s->cfa_how != CFA_REG)
				s->cfa_how = CFA_BAD;
			s->cfa_off = (__s64)u;
			continue;
		case DW_CFA_def_cfa_offset_sf:
			p = sleb(p, end, &sv);
			if (s->cfa_how != CFA_REG)
				s->cfa_how = CFA_BAD;
			s->cfa_off = mul(sv, c->daf);
			continue;
		case DW_CFA_def_cfa_expression:
			p = uleb(p, end, &u);
			if (!p || u > (__u64)(end - p))
				return 1;
			s->cfa_how = CFA_EXPR;
			s->cfa_expr = p;
			s->cfa_len = u;
			p += u;
			continue;
		case DW_CFA_GNU_args_size:
			p = uleb(p, end, &u);
			continue;
		default:
			return 1;
		}
offset:
		if (p && (rl = rule_of(s, reg)))
			*rl = (struct rule){ .how = R_OFFSET, .off = sv };
		continue;
other:
		if (p && (rl = rule_of(s, reg)))
			*rl = (struct rule){ .how = R_OTHER };
		continue;
advance:
		if (!r)
			return 1;
		err = emit(r, s);
		if (err)
			return err;
		r->loc += delta;
		if (r->loc >= r->end)
			return 0;
	}
	return p ? 0 : 1; /* an operand past the end */
}

/* The CIE at section offset @off, read and run once (kept in @cies). */
static const struct cie *cie_at(const unsigned char *ident, Elf_Data *data, __u64 off,
				struct hmap *cies)
{
	struct cie *c = hmap__get(cies, off + 1, 0);
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const char *a;
	const __u8 *d, *dend;
	void *old;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c || hmap__put(cies, off + 1, 0, c, &old)) {
		free(c);
		return NULL;
	}
	if (dwarf_next_cfi(ident, data, true, off, &next, &e) || !dwarf_cfi_cie_p(&e))
		return c; /* not ok */
	c->caf = e.cie.code_alignment_factor;
	c->daf = e.cie.data_alignment_factor;
	c->ra_reg = e.cie.return_address_register;
	c->fde_enc = DW_EH_PE_absptr;
	a = (const char *)e.cie.augmentation;
	d = e.cie.augmentation_data;
	dend = d + e.cie.augmentation_data_size;
	c->aug_len = a && a[0] == 'z';
	for (a = a && a[0] == 'z' ? a + 1 : ""; *a; a++) {
		if (*a == 'R' && d < dend) {
			c->fde_enc = *d++;
		} else if (*a == 'L' && d < dend) {
			d++;
		} else if (*a == 'P' && d < dend) {
			__u8 enc = *d++;
			__u64 v;

			/* the personality routine's pointer: its size is all that matters */
			d = read_ptr(d, dend, enc & 0x0f, 0, &v);
			if (!d)
				return c;
		} else if (*a == 'S') {
			c->signal = true;
		} else if (*a != 'B') {
			return c; /* an augmentation not known: its FDEs cannot be read */
		}
	}
	if (run(NULL, c, e.cie.initial_instructions, e.cie.initial_instructions_end, &c->init))
		return c;
	c->ok = true;
	return c;
}

/* The rows of the FDE at section offset @off, for code from @start up to @next. */
static int fde_rows(const unsigned char *ident, Elf_Data *data, struct run *r, __u64 off,
		    __u64 start, __u64 next, struct hmap *cies)
{
	const __u8 *sec = data->d_buf, *p, *end;
	struct wprof_unwind_row none = { .kind = WPROF_CFA_NONE };
	__u64 loc = start, range = 0, aug;
	Dwarf_CFI_Entry e;
	Dwarf_Off after;
	struct state s;
	int err = 1;

	r->loc = r->lo = start;
	if (off < data->d_size && !dwarf_next_cfi(ident, data, true, off, &after, &e) &&
	    !dwarf_cfi_cie_p(&e) && (r->cie = cie_at(ident, data, e.fde.CIE_pointer, cies)) &&
	    r->cie->ok) {
		end = e.fde.end;
		p = read_ptr(e.fde.start, end, r->cie->fde_enc, r->section_vaddr + (e.fde.start - sec),
			     &loc);
		p = read_ptr(p, end, r->cie->fde_enc & 0x0f, 0, &range);
		if (p && r->cie->aug_len) {
			p = uleb(p, end, &aug);
			p = p && aug <= (__u64)(end - p) ? p + aug : NULL;
		}
		/* the index found this FDE for start: it must cover it */
		if (p && start >= loc && start - loc < range) {
			r->loc = loc;
			r->end = range < next - loc ? loc + range : next;
			r->depth = 0;
			s = r->cie->init;
			err = run(r, r->cie, p, end, &s);
			if (!err)
				err = emit(r, &s); /* its rules hold up to the FDE's end */
			if (!err) {
				r->loc = r->end;
			} else if (err > 0) {
				/* rows end where an instruction could not be run */
				err = 0;
				r->loc = r->loc > r->lo ? r->loc : r->lo;
				r->loc = r->loc < r->end ? r->loc : r->end;
			}
		}
	}
	if (err < 0)
		return err;
	/* code between this FDE's end (or where its rows ended) and the next FDE has no CFI */
	if (r->loc < next) {
		if (r->loc < r->base || r->loc - r->base > 0xffffffffULL)
			return -E2BIG;
		none.pc = r->loc - r->base;
		return cfirows__push(r->rows, r->nr, r->cap, r->first, &none);
	}
	return 0;
}

int ehrows__build(const unsigned char *ident, Elf_Data *data, __u64 vaddr, const __u64 *starts,
		  const __u64 *fdes, size_t nfde, __u64 base, struct wprof_unwind_row **rows,
		  size_t *nr, size_t *cap)
{
	struct run *r = calloc(1, sizeof(*r));
	struct hmap cies = {};
	int err = 0;

	if (!r)
		return -ENOMEM;
	r->section_vaddr = vaddr;
	r->section = data->d_buf;
	r->base = base;
	r->rows = rows;
	r->nr = nr;
	r->cap = cap;
	r->first = *nr;
	for (size_t i = 0; i < nfde && !err; i++) {
		__u64 next = i + 1 < nfde ? starts[i + 1] : ~0ULL;

		if (starts[i] < base || starts[i] - base > 0xffffffffULL)
			err = -E2BIG;
		else
			err = fde_rows(ident, data, r, fdes[i] - vaddr, starts[i], next, &cies);
	}
	for (size_t i = 0; i < cies.cap; i++)
		free(cies.slots[i].val);
	hmap__clear(&cies);
	free(r);
	return err;
}
