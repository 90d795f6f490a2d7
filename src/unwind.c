// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames lost to code without frame pointers.
 *
 * A frame-pointer walk that starts in such code (Debian's libc, the vDSO)
 * reads the frame pointer of some caller further up, and so skips the
 * callers in between -- typically the very function that called
 * nanosleep() or clock_gettime(). The BPF side keeps, with the first event
 * of every user stack id, the user registers and the top of the user stack
 * (struct wprof_ucopy). Here that copy is unwound with the code's DWARF CFI
 * (.eh_frame) until a return address equals one of the frame-pointer walk's,
 * and the walk's frames continue from there. The frame-pointer stack id
 * also pins the lost callers: it holds the grandparent's return address,
 * and a call site calls one function.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

#if defined(__x86_64__)
#define REG_FP 6  /* rbp */
#define REG_SP 7  /* rsp */
#define UNWIND_SUPPORTED 1
#else
#define UNWIND_SUPPORTED 0
#endif

#define MAX_CFI_FRAMES 64

struct regs {
	__u64 pc, sp, fp;
	bool fp_known;
};

static bool read_word(const struct wprof_ucopy *c, __u64 addr, __u64 *val)
{
	if (addr < c->sp || addr + sizeof(*val) > c->sp + c->len || c->len > WPROF_UCOPY_LEN)
		return false;
	memcpy(val, c->data + (addr - c->sp), sizeof(*val));
	return true;
}

/*
 * A register rule from dwarf_frame_register(): the address it is saved at,
 * CFA-relative ("offset(N)"). Other rules are not used for rbp and the
 * return address by compilers on x86-64.
 */
static int saved_at(const Dwarf_Op *ops, size_t nops, __u64 cfa, __u64 *addr)
{
	__s64 off = 0;
	size_t i = 0;

	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	for (i = 1; i < nops; i++) {
		if (ops[i].atom == DW_OP_plus_uconst)
			off += (__s64)ops[i].number;
		else if (ops[i].atom == DW_OP_consts && i + 1 < nops &&
			 ops[i + 1].atom == DW_OP_plus)
			off += (__s64)ops[i++].number;
		else
			return -1; /* val_offset, expressions: not handled */
	}
	*addr = cfa + off;
	return 0;
}

/* One step: the caller's registers. 1: stepped, 0: outermost frame, -1: stuck. */
static int step(Dwarf_CFI *cfi, __u64 cfi_addr, const struct wprof_ucopy *c, struct regs *r)
{
	Dwarf_Op ops_mem[3], *ops;
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start, end;
	__u64 cfa, at, ra, reg;
	__s64 off;
	size_t nops;
	bool signalp;
	int ra_reg, err = -1;

	if (dwarf_cfi_addrframe(cfi, cfi_addr, &frame))
		return -1;
	ra_reg = dwarf_frame_info(frame, &start, &end, &signalp);
	if (ra_reg < 0 || dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		goto out;
	/* CFA = register + offset; libdw says DW_OP_bregx (reg, offset) */
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (__s64)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (__s64)ops[0].number;
	} else {
		goto out;
	}
	if (reg == REG_SP)
		cfa = r->sp + off;
	else if (reg == REG_FP && r->fp_known)
		cfa = r->fp + off;
	else
		goto out;
	if (dwarf_frame_register(frame, ra_reg, ops_mem, &ops, &nops))
		goto out;
	if (!nops && !ops) {
		err = 0; /* return address undefined: the outermost frame */
		goto out;
	}
	if (saved_at(ops, nops, cfa, &at) || !read_word(c, at, &ra) || !ra)
		goto out;
	/*
	 * rbp saved in this frame: restore it, if the copy holds it. Without a
	 * rule it is unchanged: it is callee-saved, and compilers emit no
	 * "same value" rules (libdw then says "undefined").
	 */
	if (!dwarf_frame_register(frame, REG_FP, ops_mem, &ops, &nops) && nops)
		r->fp_known = !saved_at(ops, nops, cfa, &at) && read_word(c, at, &r->fp);
	r->pc = ra;
	r->sp = cfa;
	err = 1;
out:
	free(frame);
	return err;
}

static void copy_stack(struct wprof_stack *out, const struct wprof_stack *in)
{
	out->nr = in->nr < WPROF_MAX_STACK_DEPTH ? in->nr : WPROF_MAX_STACK_DEPTH;
	memcpy(out->ips, in->ips, out->nr * sizeof(out->ips[0]));
}

int unwind__recover(unwind_cfi_fn cfi_at, void *ctx, int pid, const struct wprof_stack *fp,
		    const struct wprof_ucopy *c, struct wprof_stack *out, struct unwind_stats *st)
{
	struct regs r = { .pc = c->ip, .sp = c->sp, .fp = c->fp, .fp_known = true };
	__u64 cfi[MAX_CFI_FRAMES];
	bool outermost = false;
	int m = 0;

	copy_stack(out, fp);
	if (!UNWIND_SUPPORTED || !fp->nr || fp->ips[0] != c->ip)
		return 0;
	st->stacks++;
	cfi[m++] = r.pc;
	while (m < MAX_CFI_FRAMES) {
		/* a return address points after the call: look up the call */
		__u64 pc = m > 1 ? r.pc - 1 : r.pc, addr;
		Dwarf_CFI *table = cfi_at(ctx, pid, pc, &addr);
		int ret = table ? step(table, addr, c, &r) : -1;

		if (ret <= 0) {
			outermost = ret == 0;
			break;
		}
		cfi[m++] = r.pc;
	}
	/*
	 * Join where the walks meet: a CFI frame equal to a frame-pointer frame,
	 * and the next ones equal too (or either walk ends there). One equal
	 * frame is not enough: a frame-pointer walk from the vDSO (which keeps
	 * a frame pointer) through libc's clock_gettime (which does not) gets
	 * the libc frame right and skips the one after it.
	 */
	for (int i = 1; i < m; i++) {
		for (__u32 j = 1; j < fp->nr; j++) {
			if (fp->ips[j] != cfi[i])
				continue;
			if (i + 1 < m && j + 1 < fp->nr && fp->ips[j + 1] != cfi[i + 1])
				continue;
			if ((__u32)i == j)
				return 0; /* nothing was skipped */
			out->nr = 0;
			for (int k = 0; k <= i && out->nr < WPROF_MAX_STACK_DEPTH; k++)
				out->ips[out->nr++] = cfi[k];
			for (__u32 k = j + 1; k < fp->nr && out->nr < WPROF_MAX_STACK_DEPTH; k++)
				out->ips[out->nr++] = fp->ips[k];
			st->recovered++;
			st->frames += i > (int)j ? i - j : 0;
			return 1;
		}
	}
	/*
	 * They never met: the frame-pointer chain is garbage past its first
	 * frame (code using the frame pointer as a plain register) or the copy
	 * ended first. The CFI frames are right as far as they go.
	 */
	if (m > 1 && (outermost || m > (int)fp->nr)) {
		out->nr = 0;
		for (int i = 0; i < m; i++)
			out->ips[out->nr++] = cfi[i];
		st->unjoined++;
		st->recovered++;
		return 1;
	}
	return 0;
}
