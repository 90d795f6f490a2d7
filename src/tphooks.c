// SPDX-License-Identifier: GPL-2.0-only
/* Other tools' BPF programs on wprof's tracepoints: see tphooks.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "safestr.h"
#include "tphooks.h"
#include "util.h"

struct found {
	struct tphooks *out;
	__u32 *ids; /* programs counted so far: one program can hold many links and fds */
	size_t nr_ids, cap_ids;
};

/* Count program @prog_id once; @who says where it was seen (may be NULL). 0 or -ENOMEM. */
static int add_prog(struct found *f, __u32 prog_id, const char *who)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd;

	for (size_t i = 0; i < f->nr_ids; i++)
		if (f->ids[i] == prog_id)
			return 0;
	if (array_reserve(&f->ids, &f->cap_ids, f->nr_ids, sizeof(*f->ids), 16))
		return -ENOMEM;
	f->ids[f->nr_ids++] = prog_id;
	if (f->out->nr++)
		return 0;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) && info.name[0])
		snprintf(f->out->first, sizeof(f->out->first), "%s%s%s", info.name,
			 who ? " " : "", who ? who : "");
	else
		snprintf(f->out->first, sizeof(f->out->first), "program %u%s%s", prog_id,
			 who ? " " : "", who ? who : "");
	if (fd >= 0)
		close(fd);
	return 0;
}

/* tp_btf and raw_tp programs: each is attached by a raw tracepoint link. */
static int scan_links(struct found *f, const char *tp)
{
	__u32 id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd = bpf_link_get_fd_by_id(id), err = 0;

		if (fd < 0)
			continue; /* gone meanwhile */
		info.raw_tracepoint.tp_name = (__u64)(unsigned long)name;
		info.raw_tracepoint.tp_name_len = sizeof(name);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_RAW_TRACEPOINT && !strcmp(name, tp))
			err = add_prog(f, info.prog_id, NULL);
		close(fd);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* Tracepoint programs attached to perf events, found in process @pid's descriptors. */
static int scan_fds(struct found *f, const char *tp, int pid)
{
	char path[64], link[64], name[64], comm[48] = "", who[80];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return 0; /* gone meanwhile */
	while (!err && (d = readdir(dir))) {
		char fdpath[320];
		__u32 len = sizeof(name), prog_id, type;
		__u64 off, addr;
		ssize_t n;
		int fd = atoi(d->d_name);

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, d->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strcmp(link, "anon_inode:[perf_event]"))
			continue;
		if (bpf_task_fd_query(pid, fd, 0, name, &len, &prog_id, &type, &off, &addr) ||
		    type != BPF_FD_TYPE_TRACEPOINT || strcmp(name, tp))
			continue;
		if (!comm[0]) {
			char raw[32];
			int n;

			snprintf(fdpath, sizeof(fdpath), "/proc/%d/comm", pid);
			n = read_small_file(fdpath, raw, sizeof(raw));
			if (n > 0 && raw[n - 1] == '\n')
				raw[--n] = '\0';
			/* the process's own name: on root's terminal, escaped */
			safestr__str(comm, sizeof(comm), n > 0 ? raw : "?");
		}
		snprintf(who, sizeof(who), "(pid %d, %s)", pid, comm);
		err = add_prog(f, prog_id, who);
	}
	closedir(dir);
	return err;
}

int tphooks__find(const char *tp, struct tphooks *out)
{
	struct found f = { .out = out };
	struct dirent *d;
	DIR *proc;
	int err;

	memset(out, 0, sizeof(*out));
	err = scan_links(&f, tp);
	proc = err ? NULL : opendir("/proc");
	if (!err && !proc)
		err = -errno;
	while (!err && proc && (d = readdir(proc))) {
		int pid = atoi(d->d_name);

		if (pid > 0)
			err = scan_fds(&f, tp, pid);
	}
	if (proc)
		closedir(proc);
	free(f.ids);
	return err;
}
