// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util.h"

#define DEFAULT_FREQ_HZ 99
/*
 * Off-CPU intervals shorter than this are walked as a sample (see
 * --exact-above): at most one walk per this much off-CPU time, like a
 * sampler of off-CPU time at 1 kHz, while every longer block is exact.
 */
#define DEFAULT_EXACT_ABOVE_NS (1000 * 1000ULL)
/* cpu-clock is an hrtimer; beyond this the sampler itself dominates. */
#define MAX_FREQ_HZ 100000

enum {
	OPT_TAG_LEAF = 0x100,
	OPT_NO_STATES,
	OPT_BTF,
	OPT_STATS,
	OPT_USER_ONLY,
	OPT_KERNEL_ONLY,
	OPT_WAKERS,
	OPT_THREAD_NAME,
	OPT_COMM,
	OPT_MIN_BLOCK,
	OPT_MAX_BLOCK,
	OPT_NO_IDLE,
	OPT_NO_CFI,
	OPT_INLINE,
	OPT_EXACT_ABOVE,
};

static const struct option record_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "freq", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "thread-name", required_argument, NULL, OPT_THREAD_NAME },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
	{ "exact-above", required_argument, NULL, OPT_EXACT_ABOVE },
	{ "no-idle-threads", no_argument, NULL, OPT_NO_IDLE },
	{ "no-cfi", no_argument, NULL, OPT_NO_CFI },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "tag-leaf", no_argument, NULL, OPT_TAG_LEAF },
	{ "no-states", no_argument, NULL, OPT_NO_STATES },
	{ "btf", required_argument, NULL, OPT_BTF },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "user-stacks-only", no_argument, NULL, OPT_USER_ONLY },
	{ "kernel-stacks-only", no_argument, NULL, OPT_KERNEL_ONLY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

void cli_usage(FILE *f)
{
	fprintf(f,
		"Usage: wprof record [OPTIONS] {-p PID | -t TID | -a | -- CMD [ARGS...]}\n"
		"       wprof --version | --help\n"
		"\n"
		"Record where wall-clock time goes: on-CPU samples and off-CPU intervals,\n"
		"summed by stack in the kernel, printed as folded stacks for flamegraph.pl.\n"
		"\n"
		"Targets:\n"
		"  -p, --pid PID[,PID...]   every thread of these processes, also new threads\n"
		"  -t, --tid TID[,TID...]   only these threads (ids separated by commas or\n"
		"                           spaces, as pidof prints them)\n"
		"  -a, --all                every thread on the system\n"
		"  -- CMD [ARGS...]         run CMD (and what it forks), stop when it exits\n"
		"\n"
		"Recording:\n"
		"  -d, --duration SECONDS   stop after this long (default: Ctrl-C or targets exit)\n"
		"  -F, --freq HZ            on-CPU sampling frequency (default %d)\n"
		"      --user-stacks-only   do not walk kernel stacks\n"
		"      --kernel-stacks-only do not walk user stacks\n"
		"      --no-cfi             walk user stacks by frame pointers only, not\n"
		"                           with the code's CFI\n"
		"      --btf FILE           kernel BTF (default /sys/kernel/btf/vmlinux)\n"
		"      --wakers             also record who woke each blocked thread, and where\n"
		"      --min-block TIME     keep only off-CPU intervals at least this long\n"
		"      --max-block TIME     keep only off-CPU intervals at most this long\n"
		"                           (TIME: 500us, 2ms, 1s; a bare number is us)\n"
		"      --exact-above TIME   walk the stacks of every off-CPU interval at least\n"
		"                           this long; a shorter one with probability\n"
		"                           length/TIME, then weighing TIME (default 1ms;\n"
		"                           0 walks every interval)\n"
		"\n"
		"Selection:\n"
		"      --thread-name GLOB   only threads whose name matches\n"
		"      --comm GLOB          only processes whose name matches\n"
		"      --no-idle-threads    leave out threads off-CPU for the whole window\n"
		"\n"
		"Output:\n"
		"  -o, --output FILE        write to FILE (default stdout)\n"
		"  -f, --format FORMAT      folded (default), json (stacks with count/total/max,\n"
		"                           threads, block histograms), threads (table)\n"
		"      --inline             show inlined calls as frames (suffix _[i]), from DWARF\n"
		"      --tag-leaf           put the on-cpu/off-cpu frame at the leaf, not the root\n"
		"      --no-states          one off-cpu tag instead of off-cpu:sleep/disk/runqueue\n"
		"      --stats              report the BPF programs' run time per event\n"
		"  -v, --verbose            show libbpf's messages\n"
		"  -h, --help               this text\n"
		"\n"
		"Example: wprof record -p 4242 -d 30 | flamegraph.pl > wall.svg\n",
		DEFAULT_FREQ_HZ);
}

static int bad(const char *what, const char *arg, const char *want)
{
	pr_err("invalid %s '%s': %s", what, arg, want);
	return -EINVAL;
}

/*
 * -p/-t LIST: ids as `pidof` (spaces), `pgrep` (newlines) or `pgrep -d,`
 * print them. An empty element is refused wherever it is, so that a list
 * built by a script that lost an id fails instead of recording fewer targets.
 */
static int bad_id_list(int opt, const char *arg, struct record_opts *opts)
{
	const char *what = opt == 'p' ? "PID" : "TID";
	char why[128], shown[64];
	size_t i;
	int err;

	err = parse_id_list(arg, &opts->ids, &opts->nr_ids, why, sizeof(why));
	if (err == -ENOMEM)
		pr_err("out of memory");
	if (err != -EINVAL)
		return err;
	/* the list as given, on one line: pgrep's newlines show as spaces */
	snprintf(shown, sizeof(shown), "%s", arg);
	for (i = 0; shown[i]; i++)
		if ((unsigned char)shown[i] < 0x20)
			shown[i] = ' ';
	pr_err("invalid %s list '%s%s': %s; give %ss separated by commas or spaces, e.g. -%c 42,43 "
	       "or %s", what, shown, strlen(arg) >= sizeof(shown) ? "..." : "", why, what, opt,
	       opt == 'p' ? "-p \"$(pidof NAME)\"" : "-t \"$(ls /proc/PID/task)\"");
	return err;
}

int cli_parse_record(int argc, char **argv, struct record_opts *opts)
{
	int c, nr_modes = 0;
	__u64 v;

	memset(opts, 0, sizeof(*opts));
	opts->freq_hz = DEFAULT_FREQ_HZ;
	opts->max_block_ns = ~0ULL;
	opts->exact_above_ns = DEFAULT_EXACT_ABOVE_NS;
	opts->user_stacks = true;
	opts->kernel_stacks = true;
	opterr = 0;
	optind = 1;
	/* '+': stop at the first non-option, which starts CMD */
	while ((c = getopt_long(argc, argv, "+:p:t:ad:F:o:f:vh", record_options, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 't': {
			enum wprof_filter f = c == 'p' ? WPROF_FILTER_PID : WPROF_FILTER_TID;

			if (opts->nr_ids && opts->filter != f) {
				pr_err("-p and -t cannot be combined; use one of them");
				return -EINVAL;
			}
			if (!opts->nr_ids)
				nr_modes++;
			opts->filter = f;
			if (bad_id_list(c, optarg, opts))
				return -EINVAL;
			break;
		}
		case 'a':
			nr_modes++;
			opts->filter = WPROF_FILTER_ALL;
			break;
		case 'd':
			if (parse_duration_ns(optarg, &opts->duration_ns))
				return bad("duration", optarg, "expected seconds > 0, e.g. 30 or 0.5");
			break;
		case 'F':
			if (parse_positive(optarg, MAX_FREQ_HZ, &v))
				return bad("frequency", optarg, "expected an integer from 1 to 100000 Hz");
			opts->freq_hz = v;
			break;
		case 'o':
			opts->output = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "folded"))
				opts->format = FORMAT_FOLDED;
			else if (!strcmp(optarg, "json"))
				opts->format = FORMAT_JSON;
			else if (!strcmp(optarg, "threads"))
				opts->format = FORMAT_THREADS;
			else
				return bad("format", optarg, "expected folded, json or threads");
			break;
		case OPT_WAKERS:
			opts->wakers = true;
			break;
		case OPT_THREAD_NAME:
			opts->thread_glob = optarg;
			break;
		case OPT_COMM:
			opts->comm_glob = optarg;
			break;
		case OPT_MIN_BLOCK:
			if (parse_time_ns(optarg, &opts->min_block_ns))
				return bad("--min-block", optarg, "expected a time such as 500us or 2ms");
			break;
		case OPT_MAX_BLOCK:
			if (parse_time_ns(optarg, &opts->max_block_ns))
				return bad("--max-block", optarg, "expected a time such as 500us or 2ms");
			break;
		case OPT_EXACT_ABOVE:
			if (parse_time_ns(optarg, &opts->exact_above_ns) ||
			    opts->exact_above_ns > 10 * NSEC_PER_SEC)
				return bad("--exact-above", optarg,
					   "expected a time from 0 to 10s, such as 0, 250us or 1ms");
			break;
		case OPT_NO_IDLE:
			opts->no_idle_threads = true;
			break;
		case OPT_NO_CFI:
			opts->no_cfi = true;
			break;
		case OPT_INLINE:
			opts->inlines = true;
			break;
		case OPT_TAG_LEAF:
			opts->tag_leaf = true;
			break;
		case OPT_NO_STATES:
			opts->no_states = true;
			break;
		case OPT_BTF:
			opts->btf_path = optarg;
			break;
		case OPT_STATS:
			opts->bpf_stats = true;
			break;
		case OPT_USER_ONLY:
			opts->kernel_stacks = false;
			break;
		case OPT_KERNEL_ONLY:
			opts->user_stacks = false;
			break;
		case 'v':
			opts->verbose++;
			break;
		case 'h':
			cli_usage(stdout);
			return 1;
		case ':':
			pr_err("option '%s' needs a value; see 'wprof record --help'", argv[optind - 1]);
			return -EINVAL;
		default:
			pr_err("unknown option '%s'; see 'wprof record --help'", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (!opts->user_stacks && !opts->kernel_stacks) {
		pr_err("--user-stacks-only and --kernel-stacks-only exclude each other");
		return -EINVAL;
	}
	if (opts->min_block_ns > opts->max_block_ns) {
		pr_err("--min-block is larger than --max-block; nothing would be kept");
		return -EINVAL;
	}
	if (optind < argc) {
		nr_modes++;
		opts->cmd = &argv[optind];
		opts->filter = WPROF_FILTER_PID;
	}
	if (nr_modes != 1) {
		pr_err("%s; use one of -p PID, -t TID, -a or -- CMD",
		       nr_modes ? "more than one target given" : "no target given");
		return -EINVAL;
	}
	return 0;
}

void cli_free_record(struct record_opts *opts)
{
	free(opts->ids);
	opts->ids = NULL;
	opts->nr_ids = 0;
}
