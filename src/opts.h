/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_OPTS_H
#define WPROF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "wprof.h"

/* Settings of one recording: set once by the CLI, read-only afterwards. */
struct record_opts {
	enum wprof_filter filter;
	__u32 *ids; /* pids (-p) or tids (-t) */
	size_t nr_ids;
	char **cmd; /* -- CMD ARGS, NULL-terminated, or NULL */
	__u64 duration_ns; /* 0: until Ctrl-C or the targets exit */
	__u64 freq_hz;
	const char *output; /* NULL: stdout */
	const char *btf_path; /* NULL: /sys/kernel/btf/vmlinux */
	bool tag_leaf;
	bool no_states;
	bool bpf_stats;
	bool user_stacks;
	bool kernel_stacks;
	int verbose;
};

#endif /* WPROF_OPTS_H */
