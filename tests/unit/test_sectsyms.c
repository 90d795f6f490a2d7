// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/sectsyms.c through src/elfsyms.c: PLT stubs named after
 * their targets, on the stripped fixtures libwpplt*.so (tests/symbolize.mk)
 * that have each layout the linker makes: lazy .plt with 8-byte .plt.got
 * stubs, IBT's .plt.sec with 16-byte ones. Ground truth is binutils: objdump labels every stub it
 * decodes "<NAME@plt>", by code of its own. Each stub is looked up at its
 * first and last byte. Then a copy of libwpplt.so whose .plt.got says no
 * entry size (as binutils before 2.29 left it): its 8-byte stubs keep their
 * own names, none takes its neighbour's.
 */
#include <errno.h>
#include <fcntl.h>
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

static int count_in(const struct stub *stubs, int nr, const char *section)
{
	int n = 0;

	for (int i = 0; i < nr; i++)
		n += !strcmp(stubs[i].section, section);
	return n;
}

/* Every stub of @stubs named as objdump names it, at its first and last byte. */
static void check_stubs(const char *path, const struct stub *stubs, int nr, const char *what)
{
	struct elfsyms *e = index_file(path);

	if (!CHECK(e != NULL, "%s: indexed", what)) {
		return;
	}
	for (int i = 0; i < nr; i++) {
		const struct stub *s = &stubs[i];
		const char *got = elfsyms__find(e, s->addr);

		CHECK(got && !strcmp(got, s->name), "%s: %s stub at 0x%llx is %s (got %s)", what,
		      s->section, s->addr, s->name, got ? got : "none");
		if (!s->end)
			continue;
		got = elfsyms__find(e, s->end - 1);
		CHECK(got && !strcmp(got, s->name), "%s: its last byte, 0x%llx, too (got %s)", what,
		      s->end - 1, got ? got : "none");
	}
	elfsyms__free(e);
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
	check_stubs(path, stubs, nr, file);
}

/* Set the entry size of section @name of the ELF file @path to 0. */
static int clear_entsize(const char *path, const char *name)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -EINVAL;
		goto out;
	}
	/* keep the file's layout: only the header's field changes */
	elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		sh.sh_entsize = 0;
		err = gelf_update_shdr(scn, &sh) && elf_update(elf, ELF_C_WRITE) >= 0 ? 0 : -EIO;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static void test_no_entsize(void)
{
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
	if (CHECK(system(cmd) == 0 && clear_entsize(copy, ".plt.got") == 0,
		  "the copy's .plt.got has no entry size")) {
		CHECK(count_in(stubs, nr, ".plt.got") >= 3, "at least 3 stubs in .plt.got (%d)",
		      count_in(stubs, nr, ".plt.got"));
		check_stubs(copy, stubs, nr, ".plt.got without sh_entsize");
	}
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
