// SPDX-License-Identifier: GPL-2.0-only
/*
 * The -o file: a new file or a regular file is written beside and renamed
 * in place (an abort leaves the old one, a hard link of the old one keeps
 * its contents); symbolic links are followed only when root's or ours, with
 * one name, in a directory nobody else can change (else refused), 40 at
 * most; devices, FIFOs and our descriptors (/dev/fd/N, /proc/self/fd/N)
 * are written directly; and, as root, the files and links of another user
 * are refused. Each case says what outfile__open returned; no descriptor
 * is left open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "unit.h"

static char base[64];

/* write @text to @path through outfile; 0 or what failed */
static int put(const char *path, const char *text)
{
	struct outfile out;
	int err = outfile__open(path, &out);

	if (err)
		return err;
	fputs(text, out.f);
	return outfile__commit(&out);
}

/* the file's contents ("" when unreadable), in a static buffer */
static const char *get(const char *path)
{
	static char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static const char *at(const char *name)
{
	static char paths[4][PATH_MAX];
	static int i;
	char *p = paths[i++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", base, name);
	return p;
}

static void make_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* the temporary files left in @dir */
static int temps_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, ".wprof-", 7);
	if (d)
		closedir(d);
	return n;
}

static void test_files(void)
{
	struct outfile out;
	struct stat st0, st1;

	CHECK_EQ_S64(put(at("new.out"), "one\n"), 0, "a new file");
	CHECK_STREQ(get(at("new.out")), "one\n", "it has what was written");
	CHECK(!stat(at("new.out"), &st0) && (st0.st_mode & 07777) == 0644,
	      "its mode is 0666 less the umask (022)");
	if (!CHECK_EQ_S64(outfile__open(at("new.out"), &out), 0, "open an old file"))
		return;
	fputs("two\n", out.f);
	outfile__abort(&out);
	CHECK_STREQ(get(at("new.out")), "one\n", "an abort leaves the old file as it was");
	CHECK(link(at("new.out"), at("new.link")) == 0, "a hard link of the old file");
	CHECK_EQ_S64(put(at("new.out"), "three\n"), 0, "replace the old file");
	CHECK_STREQ(get(at("new.out")), "three\n", "the file has what was written");
	CHECK(!stat(at("new.out"), &st1) && st1.st_ino != st0.st_ino, "it is a new file");
	CHECK_STREQ(get(at("new.link")), "one\n", "the old file's other name keeps its contents");
	CHECK_EQ_S64(temps_in(base), 0, "no temporary file is left");
}

static void test_own_links(void)
{
	struct stat st;

	mkdir(at("sub"), 0755);
	make_file(at("sub/target"), "x\n");
	CHECK(symlink(at("sub/target"), at("l_abs")) == 0, "a link to a file");
	CHECK_EQ_S64(put(at("l_abs"), "abs\n"), 0, "write through our own link");
	CHECK_STREQ(get(at("sub/target")), "abs\n", "the file it points to is replaced");
	CHECK(!lstat(at("l_abs"), &st) && S_ISLNK(st.st_mode), "the link is still a link");
	CHECK(symlink("sub/dangling", at("l_rel")) == 0, "a relative link to no file");
	CHECK_EQ_S64(put(at("l_rel"), "rel\n"), 0, "write through it");
	CHECK_STREQ(get(at("sub/dangling")), "rel\n", "the file it names is made, in its directory");
	CHECK(symlink("sub", at("l_dir")) == 0, "a link to a directory");
	CHECK_EQ_S64(put(at("l_dir/indir"), "dir\n"), 0, "write in a directory through our link");
	CHECK_STREQ(get(at("sub/indir")), "dir\n", "the file is in the directory it points to");
	CHECK_EQ_S64(put(at("l_dir/../sub/./dots"), "dots\n"), 0, "'.' and '..' after a link");
	CHECK_STREQ(get(at("sub/dots")), "dots\n", "'..' is the parent of the link's target");
	CHECK_EQ_S64(temps_in(at("sub")), 0, "no temporary file is left");
}

static void test_link_rules(void)
{
	CHECK(symlink(at("sub/target"), at("l_two")) == 0, "a link to a file");
	CHECK(linkat(AT_FDCWD, at("l_two"), AT_FDCWD, at("l_two2"), 0) == 0,
	      "a second name of the link itself");
	CHECK_EQ_S64(put(at("l_two"), "two\n"), -EPERM, "a link with two names is not followed");
	CHECK_STREQ(get(at("sub/target")), "abs\n", "the file it points to is untouched");
	mkdir(at("open"), 0755);
	chmod(at("open"), 0777);
	CHECK(symlink(at("sub"), at("open/l")) == 0, "a link in a directory others can write");
	CHECK_EQ_S64(put(at("open/l/x"), "open\n"), -EPERM, "is not followed");
	CHECK(access(at("sub/x"), F_OK) != 0, "nothing is written where it points");
	chmod(at("open"), 01777);
	CHECK_EQ_S64(put(at("open/l/x"), "sticky\n"), 0, "when the directory is sticky, it is");
	CHECK_STREQ(get(at("sub/x")), "sticky\n", "the file is where it points");
}

static void test_loops(void)
{
	char name[32], next[32];

	CHECK(!symlink("loop_b", at("loop_a")) && !symlink("loop_a", at("loop_b")), "a loop");
	CHECK_EQ_S64(put(at("loop_a"), "x"), -ELOOP, "a loop of links");
	/* chains of 40 and 41 links: c40_0 -> c40_1 -> ... -> c40_39 -> end40 */
	for (int n = 40; n <= 41; n++) {
		for (int i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "c%d_%d", n, i);
			if (i + 1 < n)
				snprintf(next, sizeof(next), "c%d_%d", n, i + 1);
			else
				snprintf(next, sizeof(next), "end%d", n);
			symlink(next, at(name));
		}
		snprintf(name, sizeof(name), "c%d_0", n);
		CHECK_EQ_S64(put(at(name), "chain\n"), n <= 40 ? 0 : -ELOOP, "%d links", n);
	}
	CHECK_STREQ(get(at("end40")), "chain\n", "the end of 40 links is written");
	CHECK(access(at("end41"), F_OK) != 0, "the end of 41 is not");
}

static void test_not_files(void)
{
	char long_name[NAME_MAX + 2];

	make_file(at("plain"), "plain\n");
	CHECK_EQ_S64(put(base, "x"), -EISDIR, "a directory");
	CHECK_EQ_S64(put(at("sub/"), "x"), -EISDIR, "a name ending in /");
	CHECK_EQ_S64(put(at("sub/.."), "x"), -EISDIR, "a name ending in ..");
	CHECK_EQ_S64(put("", "x"), -ENOENT, "an empty name");
	CHECK_EQ_S64(put(at("nodir/x"), "x"), -ENOENT, "in a directory that does not exist");
	CHECK_EQ_S64(put(at("plain/x"), "x"), -ENOTDIR, "in a file");
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK_EQ_S64(put(at(long_name), "x"), -ENAMETOOLONG, "a name of %zu bytes", strlen(long_name));
}

/* read what is waiting in @fd */
static const char *drain(int fd)
{
	static char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_direct(void)
{
	char path[64];
	int p[2], rd, fd;

	CHECK_EQ_S64(put("/dev/null", "x"), 0, "/dev/null");
	CHECK(mkfifo(at("fifo"), 0600) == 0, "our FIFO");
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	CHECK_EQ_S64(put(at("fifo"), "fifo\n"), 0, "is written");
	CHECK_STREQ(drain(rd), "fifo\n", "its reader has what was written");
	close(rd);
	if (CHECK(pipe(p) == 0, "a pipe")) {
		snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
		CHECK_EQ_S64(put(path, "pipe\n"), 0, "%s: a link to a link of /proc", path);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
		CHECK_EQ_S64(put(path, "again\n"), 0, "%s", path);
		close(p[1]);
		CHECK_STREQ(drain(p[0]), "pipe\nagain\n", "the pipe has what was written");
		close(p[0]);
	}
	make_file(at("byfd"), "old\n");
	fd = open(at("byfd"), O_RDONLY);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_EQ_S64(put(path, "byfd\n"), 0, "%s, a regular file", path);
	CHECK_STREQ(get(at("byfd")), "byfd\n", "is replaced, by its name");
	close(fd);
	fd = open(at("byfd"), O_RDONLY);
	unlink(at("byfd"));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_EQ_S64(put(path, "gone\n"), -ENOENT, "a descriptor of a deleted file");
	close(fd);
}

static void test_relative(void)
{
	char cwd[PATH_MAX];

	if (!CHECK(getcwd(cwd, sizeof(cwd)) && !chdir(at("sub")), "cd %s", at("sub")))
		return;
	CHECK_EQ_S64(put("../rel.out", "rel\n"), 0, "../rel.out");
	CHECK_EQ_S64(put("here.out", "here\n"), 0, "here.out");
	CHECK(!chdir(cwd), "cd back");
	CHECK_STREQ(get(at("rel.out")), "rel\n", "../ is the parent directory");
	CHECK_STREQ(get(at("sub/here.out")), "here\n", "a plain name, in the working directory");
}

/* As root: what another user (nobody) owns. */
static void test_other_user(void)
{
	const uid_t nobody = 65534;
	int rd;

	make_file(at("theirs"), "theirs\n");
	CHECK(!chown(at("theirs"), nobody, nobody), "a file of another user");
	CHECK_EQ_S64(put(at("theirs"), "x"), -EPERM, "is refused");
	CHECK_STREQ(get(at("theirs")), "theirs\n", "and untouched");
	CHECK(!symlink(at("sub/target"), at("their_link")) &&
	      !lchown(at("their_link"), nobody, nobody), "a link of another user");
	CHECK_EQ_S64(put(at("their_link"), "x"), -EPERM, "is refused");
	CHECK_STREQ(get(at("sub/target")), "abs\n", "the file it points to is untouched");
	CHECK(!symlink(at("sub"), at("their_dlink")) &&
	      !lchown(at("their_dlink"), nobody, nobody), "a link of another user to a directory");
	CHECK_EQ_S64(put(at("their_dlink/through"), "x"), -EPERM, "is not gone through");
	CHECK(access(at("sub/through"), F_OK) != 0, "nothing is written where it points");
	CHECK(!mkfifo(at("their_fifo"), 0666) && !chown(at("their_fifo"), nobody, nobody),
	      "a FIFO of another user");
	/* a reader, so that a wprof that would write to it does not wait for one */
	rd = open(at("their_fifo"), O_RDONLY | O_NONBLOCK);
	CHECK_EQ_S64(put(at("their_fifo"), "x"), -EPERM, "is not written to");
	CHECK_STREQ(drain(rd), "", "its reader got nothing");
	close(rd);
	mkdir(at("their_dir"), 0755);
	CHECK(!symlink(at("sub"), at("their_dir/mine")) && !chown(at("their_dir"), nobody, nobody),
	      "our link in a directory of another user");
	CHECK_EQ_S64(put(at("their_dir/mine/moved"), "x"), -EPERM, "is not followed");
	CHECK_EQ_S64(put(at("their_dir/new.out"), "in theirs\n"), 0,
		     "a new file in a directory of another user");
	CHECK_STREQ(get(at("their_dir/new.out")), "in theirs\n", "is written");
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	int fds = open_fds();

	snprintf(base, sizeof(base), "/tmp/wprof-test_outfile.XXXXXX");
	if (!CHECK(mkdtemp(base) != NULL, "a scratch directory"))
		return unit_done();
	umask(022);
	test_files();
	test_own_links();
	test_link_rules();
	test_loops();
	test_not_files();
	test_direct();
	test_relative();
	if (geteuid() == 0)
		test_other_user();
	else
		printf("# not root: the files of another user are not tried\n");
	CHECK_EQ_S64(open_fds(), fds, "no descriptor is left open");
	if (!unit_nr_fail) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd))
			printf("# could not remove %s\n", base);
	} else {
		printf("# evidence kept in %s\n", base);
	}
	return unit_done();
}
