// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/sectsyms.c through src/elfsyms.c: PLT stubs named after
 * their targets, on the stripped fixtures libwpplt*.so (tests/symbolize.mk)
 * that have each layout the linker makes: lazy .plt with 8-byte .plt.got
 * stubs, IBT's .plt.sec with 16-byte ones. Ground truth is binutils: objdump labels every stub it
 * decodes "<NAME@plt>", by code of its own. Each stub is looked up at its
 * first and last byte. Two stubs are named otherwise than objdump labels
 * them: a C++ target's, demangled as wprof prints every name
 * ("_ZN5wpplt5countEv@plt" is "wpplt::count@plt"), and a local IFUNC's,
 * whose slot only an IRELATIVE relocation fills ("*ABS*+0x...@plt"): it
 * has no name. Then a copy of libwpplt.so whose .plt.got says no entry
 * size (as binutils before 2.29 left it): its 8-byte stubs keep their own
 * names, none takes its neighbour's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "elfsyms.h"
#include "unit.h"
#include "../fixtures/fixchild.h"

#define MAX_STUBS 64

struct stub {
	unsigned long long addr, end; /* [addr, end); end 0: the section's last, not known */
	char section[16];
	char name[128];
};

/* objdump's stubs of @path, in file order. Returns how many, -1 if objdump failed. */
static int objdump_stubs(const char *path, struct stub *stubs)
{
	char cmd[700], line[512], section[16] = "";
	int nr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char name[128];

		if (sscanf(line, "Disassembly of section %15[^:]:", section) == 1)
			continue;
		if (sscanf(line, "%llx <%127[^>]>:", &addr, name) != 2)
			continue;
		if (nr && !strcmp(stubs[nr - 1].section, section))
			stubs[nr - 1].end = addr;
		/* PLT0 ("first@plt-0x10") is no stub */
		if (!strstr(name, "@plt") || strstr(name, "@plt") != name + strlen(name) - 4 ||
		    nr == MAX_STUBS)
			continue;
		stubs[nr] = (struct stub){ .addr = addr };
		snprintf(stubs[nr].section, sizeof(stubs[nr].section), "%s", section);
		snprintf(stubs[nr].name, sizeof(stubs[nr].name), "%s", name);
		nr++;
	}
	return pclose(f) == 0 ? nr : -1;
}

static struct elfsyms *index_file(const char *path)
{
	static char *debuginfo_path = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct elfsyms *e = fd >= 0 ? elfsyms__new(fd, path) : NULL;

	if (e)
		elfsyms__index(e, &debuginfo_path, false);
	return e;
}

/*
 * The name wprof gives the stub objdump labels @label: NULL for none (also
 * for those of @unnamed, NULL-terminated: stubs whose slots the test made
 * IRELATIVE ones).
 */
static const char *expected(const char *label, const char *const *unnamed)
{
	for (int i = 0; unnamed && unnamed[i]; i++)
		if (!strcmp(label, unnamed[i]))
			return NULL;
	if (!strcmp(label, "_ZN5wpplt5countEv@plt"))
		return "wpplt::count@plt";
	return strncmp(label, "*ABS*", 5) ? label : NULL;
}

/* Whether @got is @want (NULL: no name). */
static bool same(const char *got, const char *want)
{
	return want ? got && !strcmp(got, want) : !got;
}

static int count_in(const struct stub *stubs, int nr, const char *section)
{
	int n = 0;

	for (int i = 0; i < nr; i++)
		n += !strcmp(stubs[i].section, section);
	return n;
}

/*
 * Every stub of @stubs named as objdump names it (expected(), @unnamed), at
 * its first and last byte. Returns how many stubs have no name.
 */
static int check_stubs(const char *path, const struct stub *stubs, int nr, const char *what,
		       const char *const *unnamed)
{
	struct elfsyms *e = index_file(path);
	int nr_unnamed = 0;

	if (!CHECK(e != NULL, "%s: indexed", what))
		return 0;
	for (int i = 0; i < nr; i++) {
		const struct stub *s = &stubs[i];
		const char *want = expected(s->name, unnamed), *got = elfsyms__find(e, s->addr);

		nr_unnamed += !want;
		CHECK(same(got, want), "%s: %s stub at 0x%llx (%s) is %s (got %s)", what,
		      s->section, s->addr, s->name, want ? want : "unnamed", got ? got : "none");
		if (!s->end)
			continue;
		got = elfsyms__find(e, s->end - 1);
		CHECK(same(got, want), "%s: its last byte, 0x%llx, too (got %s)", what, s->end - 1,
		      got ? got : "none");
	}
	elfsyms__free(e);
	return nr_unnamed;
}

static void test_layout(const char *file, const char *section, int min)
{
	struct stub stubs[MAX_STUBS];
	char path[600];
	int nr;

	snprintf(path, sizeof(path), "%s/%s", fixture_dir, file);
	nr = objdump_stubs(path, stubs);
	if (!CHECK(nr > 0, "%s: objdump labels its stubs (%d)", file, nr))
		return;
	CHECK(count_in(stubs, nr, section) >= min, "%s: %d stubs in %s (want >= %d)", file,
	      count_in(stubs, nr, section), section, min);
	CHECK(check_stubs(path, stubs, nr, file, NULL) >= 1, "%s: the IFUNC's stub among them",
	      file);
}

/* Section @name's header of @elf in *@sh, and the section; NULL if none. */
static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* .plt.got says no entry size. */
static bool clear_entsize(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_named(elf, ".plt.got", &sh);

	sh.sh_entsize = 0;
	return scn && gelf_update_shdr(scn, &sh);
}

/*
 * The GOT slots of getpid and malloc, the second stub of each 16 bytes of
 * .plt.got, are filled by IRELATIVE relocations: they keep no name, and no
 * 16 bytes of it hold two named stubs.
 */
static bool unname_slots(Elf *elf)
{
	int done = 0;

	GElf_Shdr sh, symsh;
	Elf_Scn *scn = section_named(elf, ".rela.dyn", &sh);
	Elf_Data *rel = scn ? elf_getdata(scn, NULL) : NULL;
	Elf_Data *sym = scn ? elf_getdata(elf_getscn(elf, sh.sh_link), NULL) : NULL;

	if (!rel || !sym || !gelf_getshdr(elf_getscn(elf, sh.sh_link), &symsh))
		return false;
	for (size_t i = 0; sh.sh_entsize && i < rel->d_size / sh.sh_entsize; i++) {
		const char *name;
		GElf_Rela r;
		GElf_Sym s;

		if (!gelf_getrela(rel, i, &r) || !gelf_getsym(sym, GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(elf, symsh.sh_link, s.st_name);
		if (!name || (strcmp(name, "getpid") && strcmp(name, "malloc")))
			continue;
		r.r_info = GELF_R_INFO(0, R_X86_64_IRELATIVE);
		if (!gelf_update_rela(rel, i, &r))
			return false;
		done++;
	}
	return done == 2 && elf_flagdata(rel, ELF_C_SET, ELF_F_DIRTY);
}

/* Apply @edit to the ELF file @path in place, its layout kept. */
static int patch_elf(const char *path, bool (*edit)(Elf *elf))
{
	int fd = open(path, O_RDWR | O_CLOEXEC), err = -EIO;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (elf) {
		/* keep the file's layout: only the fields edited change */
		elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
		if (edit(elf) && elf_update(elf, ELF_C_WRITE) >= 0)
			err = 0;
		elf_end(elf);
	}
	close(fd);
	return err;
}

static void test_no_entsize(void)
{
	static const char *const unnamed[] = { "getpid@plt", "malloc@plt", NULL };
	char path[600], copy[] = "/tmp/wprof-plt.XXXXXX", cmd[1400];
	struct stub stubs[MAX_STUBS];
	int nr, fd;

	snprintf(path, sizeof(path), "%s/libwpplt.so", fixture_dir);
	nr = objdump_stubs(path, stubs);
	fd = mkstemp(copy);
	if (!CHECK(nr > 0 && fd >= 0, "stubs of libwpplt.so, and a copy"))
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, copy);
	if (CHECK(system(cmd) == 0 && patch_elf(copy, clear_entsize) == 0,
		  "the copy's .plt.got has no entry size")) {
		CHECK(count_in(stubs, nr, ".plt.got") >= 3, "at least 3 stubs in .plt.got (%d)",
		      count_in(stubs, nr, ".plt.got"));
		CHECK(check_stubs(copy, stubs, nr, ".plt.got without sh_entsize", NULL) >= 1,
		      "the IFUNC's stub among them");
	}
	/*
	 * And the 8-byte stubs of getpid and malloc, each after a named one,
	 * through slots that only IRELATIVE relocations fill: the names of
	 * puts and strlen must not cover them.
	 */
	if (CHECK(patch_elf(copy, unname_slots) == 0, "the copy's getpid and malloc slots IRELATIVE"))
		CHECK(check_stubs(copy, stubs, nr, ".plt.got without sh_entsize, 2 slots IRELATIVE",
				  unnamed) >= 3,
		      "the stubs of getpid and malloc unnamed too");
	unlink(copy);
}

int main(void)
{
	fix_init();
	elf_version(EV_CURRENT);
	test_layout("libwpplt.so", ".plt.got", 3);
	test_layout("libwpplt.so", ".plt", 3);
	test_layout("libwpplt-ibt.so", ".plt.sec", 3);
	test_layout("libwpplt-ibt.so", ".plt.got", 3);
	test_no_entsize();
	return unit_done();
}
