// SPDX-License-Identifier: GPL-2.0-only
/*
 * Another tool's BPF program on tracepoint sched_switch, as wprof finds
 * them at its start (src/tphooks.c): a program that does nothing, attached
 * the older way bpftrace and bcc's tools use (a tracepoint perf event with
 * PERF_EVENT_IOC_SET_BPF: "perf"), or as a raw tracepoint ("raw": a BPF
 * link). Prints "ready" once attached and holds it until killed.
 *
 *	tphook perf|raw
 *
 * "perf" reads the tracepoint's id from tracefs, which must be mounted.
 * Raw syscalls: the workloads link nothing but libc.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* r0 = 0; exit */
static int load_prog(enum bpf_prog_type type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	strncpy(attr.prog_name, "tphook", sizeof(attr.prog_name) - 1);
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static int tracepoint_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/sched/sched_switch/id",
		"/sys/kernel/debug/tracing/events/sched/sched_switch/id",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		FILE *f = fopen(paths[i], "r");
		int id;

		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
		if (id >= 0)
			return id;
	}
	return -1;
}

static int attach_perf(void)
{
	struct perf_event_attr pa;
	int prog = load_prog(BPF_PROG_TYPE_TRACEPOINT), id = tracepoint_id(), fd;

	if (prog < 0 || id < 0) {
		fprintf(stderr, "tphook: %s\n", prog < 0 ? strerror(errno) :
			"no sched_switch id in tracefs (mount -t tracefs nodev /sys/kernel/tracing)");
		return -1;
	}
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = id;
	pa.sample_period = 1;
	pa.wakeup_events = 1;
	fd = syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		fprintf(stderr, "tphook: perf event: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int attach_raw(void)
{
	int prog = load_prog(BPF_PROG_TYPE_RAW_TRACEPOINT);
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = (unsigned long)"sched_switch";
	attr.raw_tracepoint.prog_fd = prog;
	if (prog < 0 || sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr) < 0) {
		fprintf(stderr, "tphook: raw tracepoint: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc != 2 || (strcmp(argv[1], "perf") && strcmp(argv[1], "raw"))) {
		fprintf(stderr, "usage: tphook perf|raw\n");
		return 2;
	}
	err = !strcmp(argv[1], "perf") ? attach_perf() : attach_raw();
	if (err)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
