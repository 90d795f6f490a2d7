// SPDX-License-Identifier: GPL-2.0-only
/* The arguments of `wprof record`, and its environment knobs, into struct record_opts. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "longblocks.h"
#include "util.h"

#define DEFAULT_FREQ_HZ 99
/*
 * Off-CPU intervals shorter than this are walked as a sample (see
 * --exact-above): at most one walk per this much off-CPU time, like a
 * sampler of off-CPU time at 1 kHz, while every longer block is exact.
 */
#define DEFAULT_EXACT_ABOVE_NS (1000 * 1000ULL)
/* Off-CPU intervals this long are kept one by one, with their instant (--long-block). */
#define DEFAULT_LONG_BLOCK_NS (100 * 1000 * 1000ULL)
/* The timeline's slices (--slice): every time is kept by the slice it was in. */
#define DEFAULT_SLICE_NS NSEC_PER_SEC
#define MIN_SLICE_NS (10 * NSEC_PER_MSEC)
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
	OPT_CHECK_DEFERRED,
	OPT_LONG_BLOCK,
	OPT_SLICE,
	OPT_GROUP,
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
	{ "long-block", required_argument, NULL, OPT_LONG_BLOCK },
	{ "slice", required_argument, NULL, OPT_SLICE },
	{ "no-idle-threads", no_argument, NULL, OPT_NO_IDLE },
	{ "no-cfi", no_argument, NULL, OPT_NO_CFI },
	{ "check-deferred", no_argument, NULL, OPT_CHECK_DEFERRED },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "tag-leaf", no_argument, NULL, OPT_TAG_LEAF },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "no-states", no_argument, NULL, OPT_NO_STATES },
	{ "btf", required_argument, NULL, OPT_BTF },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "user-stacks-only", no_argument, NULL, OPT_USER_ONLY },
	{ "kernel-stacks-only", no_argument, NULL, OPT_KERNEL_ONLY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

const struct option *cli_record_options(void)
{
	return record_options;
}

void cli_usage(FILE *f)
{
	fprintf(f,
		"Usage: wprof record [OPTIONS] {-p PID | -t TID | -a | -- CMD [ARGS...]}\n"
		"       wprof report [OPTIONS] FILE.wprof   (see wprof report --help)\n"
		"       wprof diff [OPTIONS] BEFORE AFTER   (see wprof diff --help)\n"
		"       wprof --version | --help\n"
		"\n"
		"Record where wall-clock time goes: on-CPU samples and off-CPU intervals,\n"
		"summed by stack in the kernel, printed as folded stacks, a flame graph\n"
		"(svg) or a pprof profile.\n"
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
		"      --long-block TIME    keep every off-CPU interval at least this long one\n"
		"                           by one, with its instant and stacks (default\n"
		"                           100ms; the longest %d; 0: none)\n"
		"      --slice TIME         keep every time by the slice of the window it was\n"
		"                           in, for wprof report --from/--to and the flame\n"
		"                           graph's time strip (default 1s; 10ms or more;\n"
		"                           0: none; past 512 slices they double)\n"
		"      --check-deferred     also walk at switch-out each user stack left to\n"
		"                           its thread's resume, and count differences\n"
		"                           (a self-test; costs what deferring saves)\n"
		"\n"
		"Selection:\n"
		"      --thread-name GLOB   only threads whose name matches\n"
		"      --comm GLOB          only processes whose name matches\n"
		"      --no-idle-threads    leave out threads off-CPU for the whole window\n"
		"\n"
		"Output:\n"
		"  -o, --output FILE        write to FILE (default stdout); give it again for\n"
		"                           more files of the same recording, each in the\n"
		"                           format its name ends in (.svg, .pb.gz, .json,\n"
		"                           .folded, .wprof), other names in -f's\n"
		"  -f, --format FORMAT      folded (default), json (stacks with count/total/max,\n"
		"                           threads, block histograms), threads (table), svg\n"
		"                           (interactive flame graph), pprof (gzipped\n"
		"                           profile.proto, for go tool pprof), wprof (the\n"
		"                           recording itself, for wprof report)\n"
		"      --inline             show inlined calls as frames (suffix _[i]), from DWARF\n"
		"      --tag-leaf           put the on-cpu/off-cpu frame at the leaf, not the root\n"
		"      --group WHAT         the stacks of threads merged by: thread (default:\n"
		"                           its name), pool (worker-12 as worker-*), process,\n"
		"                           none (one stack per code path); not in a .wprof\n"
		"      --no-states          one off-cpu tag instead of off-cpu:sleep/disk/runqueue\n"
		"      --stats              also how the recording went: events, stack walks,\n"
		"                           unwind tables, the maps' drains, the BPF programs'\n"
		"                           run time per event, wprof's own CPU\n"
		"  -v, --verbose            show libbpf's messages\n"
		"  -h, --help               this text\n"
		"\n"
		"Example: wprof record -p 4242 -d 30 -o wall.svg -o wall.wprof\n"
		"         wprof report wall.wprof -f threads --comm 'postgres*'\n",
		DEFAULT_FREQ_HZ, LONG_BLOCKS_MAX);
}

static int bad(const char *what, const char *arg, const char *want)
{
	pr_err("invalid %s '%s': %s", what, arg, want);
	return -EINVAL;
}

int cli_format_of_name(const char *name, enum output_format *f)
{
	static const char *const names[] = {
		[FORMAT_FOLDED] = "folded", [FORMAT_JSON] = "json", [FORMAT_THREADS] = "threads",
		[FORMAT_SVG] = "svg",       [FORMAT_PPROF] = "pprof", [FORMAT_WPROF] = "wprof",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i])) {
			*f = i;
			return 0;
		}
	return bad("format", name, "expected folded, json, threads, svg, pprof or wprof");
}

/*
 * The format an -o file's name asks for: .svg, .pb.gz (what pprof tools
 * name their files), .json, .folded, .wprof. Other names take -f's.
 */
static bool format_of_path(const char *path, enum output_format *f)
{
	static const struct {
		const char *ext;
		enum output_format format;
	} exts[] = {
		{ ".svg", FORMAT_SVG }, { ".pb.gz", FORMAT_PPROF },
		{ ".json", FORMAT_JSON }, { ".folded", FORMAT_FOLDED },
		{ ".wprof", FORMAT_WPROF },
	};
	size_t len = strlen(path);

	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		size_t n = strlen(exts[i].ext);

		if (len > n && !strcmp(path + len - n, exts[i].ext)) {
			*f = exts[i].format;
			return true;
		}
	}
	return false;
}

/*
 * A file name's ending that names no format: ".png" in "x.png", NULL for
 * a name without one (x, /dev/stdout, .hidden) or ending in .txt, which
 * is text in any format.
 */
static const char *unknown_ending(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base || !dot[1] || !strcmp(dot, ".txt"))
		return NULL;
	return dot;
}

int cli_set_outputs(enum output_format format, bool format_given, struct output_spec *outs,
		    size_t *nr)
{
	if (!*nr) {
		/* gzip is no use to a terminal, and may upset it */
		if ((format == FORMAT_PPROF || format == FORMAT_WPROF) && isatty(STDOUT_FILENO)) {
			pr_err("-f %s is binary: give -o FILE%s or redirect stdout",
			       format == FORMAT_PPROF ? "pprof" : "wprof",
			       format == FORMAT_PPROF ? ".pb.gz" : ".wprof");
			return -EINVAL;
		}
		outs[0].path = NULL;
		outs[0].format = format;
		*nr = 1;
		return 0;
	}
	for (size_t i = 0; i < *nr; i++) {
		struct output_spec *o = &outs[i];

		if (!format_of_path(o->path, &o->format)) {
			/* x.png is not silently folded text: -f says what an unknown name is */
			if (!format_given && unknown_ending(o->path)) {
				pr_err("-o %s: '%s' names no format; end the name in .svg, .pb.gz, "
				       ".json, .folded or .wprof, or give -f FORMAT", o->path,
				       unknown_ending(o->path));
				return -EINVAL;
			}
			o->format = format;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(outs[j].path, o->path)) {
				pr_err("-o %s given twice; give each output its own file", o->path);
				return -EINVAL;
			}
	}
	return 0;
}

/*
 * -p/-t LIST: ids as `pidof` (spaces), `pgrep` (newlines) or `pgrep -d,`
 * print them. An empty element is refused wherever it is, so that a list
 * built by a script that lost an id fails instead of recording fewer targets.
 */
int cli_id_list(int opt, const char *arg, __u32 **ids, size_t *nr)
{
	const char *what = opt == 'p' ? "PID" : "TID";
	char why[128], shown[64];
	size_t i;
	int err;

	err = parse_id_list(arg, ids, nr, why, sizeof(why));
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

/*
 * The choice environment variable @var names among @names (@names[0] is
 * "auto", which unset or empty means too): its index, or -EINVAL after a
 * line that lists the choices.
 */
static int env_choice(const char *var, const char *const *names, size_t n)
{
	const char *v = getenv(var);
	char list[128] = "";

	if (!v || !*v)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v, names[i]))
			return i;
	for (size_t i = 1; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i > 1 ? ", " : "", names[i]);
	pr_err("%s='%s' is not known; use %s or %s", var, v, list, names[0]);
	return -EINVAL;
}

/*
 * WPROF_ATTACH=raw_tp loads the programs kernels without tp_btf get (the
 * tests run them so on this kernel too); "auto" or unset: tp_btf where it loads.
 * WPROF_SWITCH_TIME=entry times every switch at the entry of __schedule(),
 * =switch where wprof's sched_switch program runs; "auto": by the run queue's
 * clock where the programs can reach it, else at the entry only when another
 * BPF program on sched_switch runs before wprof's.
 * WPROF_RESUME_WALK=task_work|exit|auto: see enum resume_walk.
 * WPROF_RUNQ=wakeup|auto: see enum runq_source.
 * WPROF_RETIRE=always|never|auto: see enum retire.
 * WPROF_THREAD_SLOTS=few|auto: see record_opts.few_slots.
 * WPROF_PROC_ENDS=proc|auto: see record_opts.proc_ends_proc.
 * WPROF_STEAL=off|auto: see record_opts.no_steal.
 * WPROF_THROTTLE=off|auto: see record_opts.no_throttle.
 * WPROF_RAN_INSTEAD=off|auto: see record_opts.no_ran_instead.
 * WPROF_PYTHON=off|auto: see record_opts.no_python.
 * WPROF_UNWIND_ROWS=few|auto: see record_opts.few_rows.
 * WPROF_SLICES=few|auto: see record_opts.few_slices.
 * WPROF_HELD=off|check|auto: see record_opts.no_held.
 */
static int choice_envs(struct record_opts *opts)
{
	static const char *const attach[] = { "auto", "raw_tp" };
	/* in the order of enum switch_time and enum resume_walk */
	static const char *const switch_time[] = { "auto", "entry", "switch" };
	static const char *const resume_walk[] = { "auto", "task_work", "exit" };
	static const char *const retire[] = { "auto", "always", "never" };
	static const char *const runq[] = { "auto", "wakeup" };
	static const char *const slots[] = { "auto", "few" };
	static const char *const ends[] = { "auto", "proc" };
	static const char *const steal[] = { "auto", "off" };
	static const char *const ran[] = { "auto", "off" };
	static const char *const rows[] = { "auto", "few" };
	static const char *const held[] = { "auto", "off", "check" };
	static const char *const slices[] = { "auto", "few" };
	int a = env_choice("WPROF_ATTACH", attach, ARRAY_SIZE(attach));
	int t = a < 0 ? a : env_choice("WPROF_SWITCH_TIME", switch_time, ARRAY_SIZE(switch_time));
	int r = t < 0 ? t : env_choice("WPROF_RESUME_WALK", resume_walk, ARRAY_SIZE(resume_walk));
	int e = r < 0 ? r : env_choice("WPROF_RETIRE", retire, ARRAY_SIZE(retire));
	int q = e < 0 ? e : env_choice("WPROF_RUNQ", runq, ARRAY_SIZE(runq));
	int l = q < 0 ? q : env_choice("WPROF_THREAD_SLOTS", slots, ARRAY_SIZE(slots));
	int p = l < 0 ? l : env_choice("WPROF_PROC_ENDS", ends, ARRAY_SIZE(ends));
	int st = p < 0 ? p : env_choice("WPROF_STEAL", steal, ARRAY_SIZE(steal));
	int ur = st < 0 ? st : env_choice("WPROF_UNWIND_ROWS", rows, ARRAY_SIZE(rows));
	int h = ur < 0 ? ur : env_choice("WPROF_HELD", held, ARRAY_SIZE(held));
	int sl = h < 0 ? h : env_choice("WPROF_SLICES", slices, ARRAY_SIZE(slices));
	int th = sl < 0 ? sl : env_choice("WPROF_THROTTLE", steal, ARRAY_SIZE(steal));
	int ri = th < 0 ? th : env_choice("WPROF_RAN_INSTEAD", ran, ARRAY_SIZE(ran));
	int py = ri < 0 ? ri : env_choice("WPROF_PYTHON", steal, ARRAY_SIZE(steal));

	if (py < 0)
		return py;
	opts->no_python = py == 1;
	opts->no_throttle = th == 1;
	opts->no_ran_instead = ri == 1;
	opts->few_slices = sl == 1;
	opts->no_held = h == 1;
	opts->check_held = h == 2;
	opts->few_rows = ur == 1;
	opts->no_steal = st == 1;
	opts->few_slots = l == 1;
	opts->proc_ends_proc = p == 1;
	opts->raw_tp = a == 1;
	opts->switch_time = t;
	opts->resume_walk = r;
	opts->retire = e;
	opts->runq = q;
	return 0;
}

int cli_parse_record(int argc, char **argv, struct record_opts *opts)
{
	int c, nr_modes = 0;
	bool format_given = false;
	__u64 v;

	memset(opts, 0, sizeof(*opts));
	opts->freq_hz = DEFAULT_FREQ_HZ;
	opts->max_block_ns = ~0ULL;
	opts->exact_above_ns = DEFAULT_EXACT_ABOVE_NS;
	opts->long_block_ns = DEFAULT_LONG_BLOCK_NS;
	opts->slice_ns = DEFAULT_SLICE_NS;
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
			if (cli_id_list(c, optarg, &opts->ids, &opts->nr_ids))
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
			if (opts->nr_outputs == MAX_OUTPUTS) {
				pr_err("more than %d -o files; record again for more", MAX_OUTPUTS);
				return -EINVAL;
			}
			if (!opts->output)
				opts->output = optarg;
			opts->outputs[opts->nr_outputs++].path = optarg;
			break;
		case 'f':
			if (cli_format_of_name(optarg, &opts->format))
				return -EINVAL;
			format_given = true;
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
		case OPT_LONG_BLOCK:
			if (parse_time_ns(optarg, &opts->long_block_ns) ||
			    (opts->long_block_ns && opts->long_block_ns < NSEC_PER_MSEC))
				return bad("--long-block", optarg,
					   "expected 0 or a time of 1ms or more, such as 100ms or 1s");
			break;
		case OPT_SLICE:
			if (parse_time_ns(optarg, &opts->slice_ns) ||
			    (opts->slice_ns && opts->slice_ns < MIN_SLICE_NS) ||
			    opts->slice_ns > 3600 * NSEC_PER_SEC)
				return bad("--slice", optarg,
					   "expected 0 or a time from 10ms to 1h, such as 100ms or 1s");
			break;
		case OPT_NO_IDLE:
			opts->no_idle_threads = true;
			break;
		case OPT_NO_CFI:
			opts->no_cfi = true;
			break;
		case OPT_CHECK_DEFERRED:
			opts->check_deferred = true;
			break;
		case OPT_INLINE:
			opts->inlines = true;
			break;
		case OPT_TAG_LEAF:
			opts->tag_leaf = true;
			break;
		case OPT_GROUP:
			if (group__parse(optarg, &opts->group))
				return -EINVAL;
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
	if (cli_set_outputs(opts->format, format_given, opts->outputs, &opts->nr_outputs))
		return -EINVAL;
	if (choice_envs(opts))
		return -EINVAL;
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
