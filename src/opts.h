/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef WPROF_OPTS_H
#define WPROF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "wprof.h"

enum output_format {
	FORMAT_FOLDED,
	FORMAT_JSON,
	FORMAT_THREADS,
};

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
	enum output_format format;
	bool tag_leaf;
	bool wakers;
	const char *thread_glob; /* --thread-name */
	const char *comm_glob;   /* --comm */
	__u64 min_block_ns, max_block_ns;
	__u64 exact_above_ns; /* shorter off-CPU intervals are walked as a sample; 0: none */
	bool no_idle_threads;
	bool no_cfi; /* no stack copies: frame pointers only */
	bool inlines; /* name inlined calls from DWARF, as frames of their own */
	bool no_states;
	bool bpf_stats;
	bool user_stacks;
	bool kernel_stacks;
	int verbose;
};

#endif /* WPROF_OPTS_H */
