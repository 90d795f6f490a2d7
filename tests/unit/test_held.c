// SPDX-License-Identifier: GPL-2.0-only
/*
 * The walk of a held stack's copy (src/held.c) on a made-up process: one
 * mapping whose rows say f's CFA is sp + 16, g's sp + 8, main_start is the
 * outermost frame, and an entry stub without CFI follows. Checks the frames
 * of a whole walk, the cut reasons of a copy that lacks a page or ends too
 * soon, the entry stub's zeroed frame pointer, rows given back since the
 * maps were made, and registers no stack could have.
 */
#include <stdlib.h>

#include "unit.h"
#include "held.h"

#define CODE 0x400000ULL
#define STACK 0x7f0000000000ULL
#define TAG 7

static struct wprof_unwind_row rows[8];
static struct wprof_proc_maps pm;
static struct wprof_held rec;

static void setup(void)
{
	memset(rows, 0, sizeof(rows));
	rows[0] = (struct wprof_unwind_row){ .pc = TAG, .kind = WPROF_ROW_HEADER };
	rows[1] = (struct wprof_unwind_row){ .pc = 2 }; /* page 0: row 2 in force */
	rows[2] = (struct wprof_unwind_row){ .pc = 0x000, .kind = WPROF_CFA_SP, .cfa_off = 16 }; /* f */
	rows[3] = (struct wprof_unwind_row){ .pc = 0x100, .kind = WPROF_CFA_SP, .cfa_off = 8 };  /* g */
	rows[4] = (struct wprof_unwind_row){ .pc = 0x200, .kind = WPROF_CFA_END };  /* main_start */
	rows[5] = (struct wprof_unwind_row){ .pc = 0x300, .kind = WPROF_CFA_ENTRY };
	rows[6] = (struct wprof_unwind_row){ .pc = 0x380, .kind = WPROF_CFA_NONE };
	memset(&pm, 0, sizeof(pm));
	pm.nr = 1;
	pm.maps[0] = (struct wprof_exec_map){ .start = CODE, .end = CODE + 0x1000, .base = CODE,
					      .row_first = 2, .row_nr = 5, .page_first = 1,
					      .page_nr = 1, .tag = TAG };
	memset(&rec, 0, sizeof(rec));
	rec.base = STACK;
	rec.pages = (1U << WPROF_HELD_PAGES) - 1;
}

/* the word at @addr of the copy */
static void put(__u64 addr, __u64 val)
{
	memcpy(rec.data + (addr - rec.base), &val, sizeof(val));
}

static int walk(struct wprof_stack *st)
{
	return held__walk_one(&rec, &pm, rows, 8, st);
}

static void test_whole(void)
{
	struct wprof_stack st;

	setup();
	rec.pc = CODE + 0x10;
	rec.sp = STACK + 0x1400;
	put(rec.sp + 8, CODE + 0x150);  /* f's return address, into g */
	put(rec.sp + 16, CODE + 0x250); /* g's, into main_start */
	CHECK(!walk(&st), "walked");
	CHECK_EQ_U64(st.nr, 3, "f, g, main_start");
	CHECK(st.ips[0] == CODE + 0x10 && st.ips[1] == CODE + 0x150 && st.ips[2] == CODE + 0x250,
	      "each frame's address");

	rec.pages &= ~(1U << 1); /* the page of sp + 8 could not be read */
	CHECK(!walk(&st) && st.nr == 2 && st.ips[1] == (WPROF_FRAME_CUT | WPROF_CUT_READ),
	      "a page the kernel could not read: cut as unreadable");

	setup();
	rec.pc = CODE + 0x10;
	rec.sp = STACK + sizeof(rec.data) - 8; /* f's return address just past the copy */
	CHECK(!walk(&st) && st.nr == 2 && st.ips[1] == (WPROF_FRAME_CUT | WPROF_CUT_COPY),
	      "past the pages copied: cut as such");
}

static void test_entry(void)
{
	struct wprof_stack st;

	setup();
	rec.pc = CODE + 0x310;
	rec.sp = STACK + 0x1400;
	CHECK(!walk(&st) && st.nr == 1, "the entry stub with a zeroed fp: the outermost frame");
	rec.fp = rec.sp + 32; /* a frame-pointer step there otherwise */
	put(rec.fp, 0);
	put(rec.fp + 8, CODE + 0x250);
	CHECK(!walk(&st) && st.nr == 2 && st.ips[1] == CODE + 0x250,
	      "with a frame pointer: a frame-pointer step");
	rec.pc = CODE + 0x390; /* past the stub, no CFI: no end for a zeroed fp */
	rec.fp = 0;
	CHECK(!walk(&st) && st.nr == 2 && st.ips[1] == (WPROF_FRAME_CUT | WPROF_CUT_NO_CODE),
	      "code without CFI after it: a zeroed fp is a cut, not an end");
}

static void test_stale_and_hostile(void)
{
	struct wprof_stack st;

	setup();
	rec.pc = CODE + 0x10;
	rec.sp = STACK + 0x1400;
	rows[0].pc = TAG + 1; /* the rows were given to other code since */
	CHECK(walk(&st) == 1, "rows no longer the maps': walked later, with newer maps");

	setup();
	rec.pc = CODE + 0x10;
	rec.sp = ~0ULL - 4; /* no stack there */
	CHECK(!walk(&st) && st.nr == 2 && st.ips[1] >= WPROF_FRAME_CUT, "sp at the top: cut");
	rec.sp = 0;
	CHECK(!walk(&st) && st.nr == 2 && st.ips[1] >= WPROF_FRAME_CUT, "sp 0: cut");
	rec.pc = 0x10; /* not in the mapping */
	CHECK(!walk(&st) && st.nr == 2 && st.ips[0] == 0x10 &&
	      st.ips[1] == (WPROF_FRAME_CUT | WPROF_CUT_NO_CODE),
	      "pc outside every mapping: the pc, cut as not in code");
}

int main(void)
{
	test_whole();
	test_entry();
	test_stale_and_hostile();
	return unit_done();
}
