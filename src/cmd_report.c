// SPDX-License-Identifier: GPL-2.0-only
/*
 * wprof report: any output of a saved recording (wprof record -o X.wprof),
 * optionally of fewer threads. Reads a file: needs neither root nor BPF.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_report.h"
#include "gzip.h"
#include "output.h"
#include "recfile.h"
#include "report.h"
#include "timeline.h"
#include "util.h"

struct report_opts {
	const char *input;
	enum output_format format;
	struct output_spec outputs[MAX_OUTPUTS];
	size_t nr_outputs;
	struct rec_filter filter;
	__u32 *pids, *tids;
	size_t nr_pids, nr_tids;
	bool format_given; /* -f */
	enum group_by group;
	bool quiet;
	bool stats;
	bool tag_leaf;
	bool range;              /* --from or --to */
	bool to_given;           /* --to */
	__u64 from_ns, to_ns;    /* of the window */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wprof report [OPTIONS] FILE.wprof\n"
		"\n"
		"Print a recording saved by wprof record -o FILE.wprof, in any format, as\n"
		"wprof record would have printed it; with the selection options, of fewer\n"
		"threads. FILE may be folded text too (wprof's, hand-edited, another\n"
		"tool's): its stacks drawn as any output. Reads the file only: needs\n"
		"neither root nor BPF.\n"
		"\n"
		"  -o, --output FILE        write to FILE (default stdout); give it again for\n"
		"                           more files, each in the format its name ends in\n"
		"                           (.svg, .pb.gz, .json, .folded, .wprof)\n"
		"  -f, --format FORMAT      folded (default), json, threads, svg, pprof, wprof\n"
		"  -p, --pid PID[,PID...]   only the threads of these processes\n"
		"  -t, --tid TID[,TID...]   only these threads\n"
		"      --thread-name GLOB   only threads whose name matches\n"
		"      --comm GLOB          only processes whose name matches\n"
		"      --no-idle-threads    leave out threads off-CPU for the whole window\n"
		"      --from SECONDS       only the time from this far into the window ...\n"
		"      --to SECONDS         ... to this far (decimals; rounded out to the\n"
		"                           recording's slices, wprof record --slice)\n"
		"      --tag-leaf           the tag (on-cpu, off-cpu:STATE) as the last frame\n"
		"      --group WHAT         the stacks of threads merged by: thread (default:\n"
		"                           its name), pool (worker-12 as worker-*), process,\n"
		"                           none (one stack per code path)\n"
		"  -q, --quiet              no summary on stderr\n"
		"      --stats              also how the recording went: events, stack walks,\n"
		"                           unwind tables, the maps' drains, switches by kind\n"
		"  -h, --help               this text\n"
		"\n"
		"What is chosen while recording (-d, -F, --wakers, --min-block, --inline,\n"
		"--no-states, ...) cannot be changed here: record again.\n"
		"Exit status: 0; 1 when the file cannot be read or an output not written;\n"
		"2 on a usage error.\n");
}

enum {
	OPT_THREAD_NAME = 0x100,
	OPT_COMM,
	OPT_NO_IDLE,
	OPT_TAG_LEAF,
	OPT_STATS,
	OPT_FROM,
	OPT_TO,
	OPT_GROUP,
	OPT_RECORD_ONLY, /* an option of wprof record that a recording cannot undo */
};

static const struct option own_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "thread-name", required_argument, NULL, OPT_THREAD_NAME },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "no-idle-threads", no_argument, NULL, OPT_NO_IDLE },
	{ "tag-leaf", no_argument, NULL, OPT_TAG_LEAF },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
};

/*
 * report's own options, then every other option of wprof record, known so
 * that it is refused by name (a new record option is, without a change here).
 */
static struct option report_options[ARRAY_SIZE(own_options) + 64];

static void build_options(void)
{
	const struct option *rec = cli_record_options();
	size_t n = ARRAY_SIZE(own_options);

	memcpy(report_options, own_options, sizeof(own_options));
	for (; rec->name && n < ARRAY_SIZE(report_options) - 1; rec++) {
		bool own = false;

		for (size_t i = 0; i < ARRAY_SIZE(own_options) && !own; i++)
			own = !strcmp(own_options[i].name, rec->name);
		if (own)
			continue;
		report_options[n] = *rec;
		report_options[n++].val = OPT_RECORD_ONLY;
	}
	memset(&report_options[n], 0, sizeof(report_options[n]));
}

/* A number of seconds into the window, 0 too ("2.5"). 0 or -EINVAL. */
static int parse_offset(const char *s, __u64 *ns)
{
	if (*s && strspn(s, "0.") == strlen(s) && strchr(s, '0')) {
		*ns = 0;
		return 0;
	}
	return parse_duration_ns(s, ns);
}

/* 0, 1 when help was printed, -EINVAL (or -ENOMEM) after one error line. */
static int parse(int argc, char **argv, struct report_opts *o)
{
	int c, idx;

	build_options();
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:f:p:t:qhadF:v", report_options, &idx)) != -1) {
		switch (c) {
		case 'o':
			if (o->nr_outputs == MAX_OUTPUTS) {
				pr_err("more than %d -o files; report again for more", MAX_OUTPUTS);
				return -EINVAL;
			}
			o->outputs[o->nr_outputs++].path = optarg;
			break;
		case 'f':
			if (cli_format_of_name(optarg, &o->format))
				return -EINVAL;
			o->format_given = true;
			break;
		case 'p':
			if (cli_id_list(c, optarg, &o->pids, &o->nr_pids))
				return -EINVAL;
			break;
		case 't':
			if (cli_id_list(c, optarg, &o->tids, &o->nr_tids))
				return -EINVAL;
			break;
		case OPT_THREAD_NAME:
			o->filter.thread_glob = optarg;
			break;
		case OPT_COMM:
			o->filter.comm_glob = optarg;
			break;
		case OPT_NO_IDLE:
			o->filter.no_idle_threads = true;
			break;
		case OPT_TAG_LEAF:
			o->tag_leaf = true;
			break;
		case OPT_GROUP:
			if (group__parse(optarg, &o->group))
				return -EINVAL;
			break;
		case OPT_FROM:
		case OPT_TO:
			if (parse_offset(optarg, c == OPT_FROM ? &o->from_ns : &o->to_ns)) {
				pr_err("--%s '%s': expected seconds into the window, such as 0, 2 "
				       "or 12.5", c == OPT_FROM ? "from" : "to", optarg);
				return -EINVAL;
			}
			o->range = true;
			o->to_given |= c == OPT_TO;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'a':
		case 'd':
		case 'F':
		case 'v':
			pr_err("-%c is chosen while recording: a recording cannot change it; give it "
			       "to 'wprof record' and record again", c);
			return -EINVAL;
		case OPT_RECORD_ONLY:
			pr_err("--%s is chosen while recording: a recording cannot change it; give "
			       "it to 'wprof record' and record again", report_options[idx].name);
			return -EINVAL;
		case ':':
			pr_err("option '%s' needs a value; see 'wprof report --help'",
			       argv[optind - 1]);
			return -EINVAL;
		default:
			pr_err("unknown option '%s'; see 'wprof report --help'", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (argc - optind != 1) {
		pr_err("%s; usage: wprof report [OPTIONS] FILE.wprof",
		       argc - optind < 1 ? "no recording given" : "more than one recording given");
		return -EINVAL;
	}
	o->input = argv[optind];
	if (o->to_given && o->to_ns <= o->from_ns) {
		pr_err("--to must be later than --from; nothing would be left");
		return -EINVAL;
	}
	if (o->nr_pids) {
		o->filter.pids = o->pids;
		o->filter.nr_pids = o->nr_pids;
	}
	if (o->nr_tids) {
		o->filter.tids = o->tids;
		o->filter.nr_tids = o->nr_tids;
	}
	return cli_set_outputs(o->format, o->format_given, o->outputs, &o->nr_outputs);
}

static bool filtering(const struct rec_filter *f)
{
	return f->pids || f->tids || f->thread_glob || f->comm_glob || f->no_idle_threads;
}

/* --from/--to: @rec cut to the range, which is said (rounded to slices) with what it leaves out. */
static int cut_range(struct recording *rec, const struct report_opts *o)
{
	__u64 from = o->from_ns, to = o->to_given ? o->to_ns : rec->prof.window_ns, unplaced = 0;
	__u64 window = rec->prof.window_ns;
	int err = timeline__range(rec, &from, &to, &unplaced);

	if (err == -ENODATA)
		pr_err("%s: no slices of time in this recording (saved by an older wprof): "
		       "--from/--to need one recorded with this one", o->input);
	else if (err == -ERANGE)
		pr_err("%s: --from %.3f is past the window's end (%.3f s); give less", o->input,
		       o->from_ns / 1e9, window / 1e9);
	else if (err)
		pr_err("%s: cannot cut the range: %s", o->input, strerror(-err));
	if (err)
		return err;
	if (o->quiet)
		return 0;
	pr_info("the range %.3f-%.3f s of the %.3f s window (in slices of %.3f s)", from / 1e9,
		to / 1e9, window / 1e9, rec->slice_ns / 1e9);
	if (unplaced >= 1000)
		pr_info("%.3f s of thread time not known by slice (threads never sampled, or "
			"stacks never walked) is left out of the range", unplaced / 1e6);
	return 0;
}

/*
 * @o->input as a recording: saved by wprof record (gzip), else folded text
 * (*@folded), read as a recording of lines alone. 0, or -errno after one
 * error line.
 */
static int load(const struct report_opts *o, struct recording *rec, bool *folded)
{
	unsigned char magic[2];
	FILE *f = fopen(o->input, "re");
	size_t n;

	if (!f)
		return recfile__load(o->input, rec); /* says why */
	n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	if (gzip__is_gzip(magic, n))
		return recfile__load(o->input, rec);
	*folded = true;
	return recording__from_folded(o->input, rec);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {};
	struct recording rec;
	struct outputs outs = {};
	bool folded = false;
	int err;

	err = parse(argc, argv, &o);
	if (err) {
		free(o.pids);
		free(o.tids);
		return err > 0 ? 0 : 2;
	}
	err = load(&o, &rec, &folded);
	if (err)
		goto out;
	if (folded && (filtering(&o.filter) || o.range || o.stats ||
		       o.group == GROUP_PROCESS)) {
		pr_err("%s is folded text: it does not say threads, processes or times; the "
		       "selection options, --from/--to, --stats and --group process need a "
		       "recording saved by wprof record -o X.wprof", o.input);
		err = -EINVAL;
		goto out;
	}
	for (size_t i = 0; folded && i < o.nr_outputs; i++) {
		enum output_format f = o.outputs[i].format;

		if (f == FORMAT_JSON || f == FORMAT_THREADS || f == FORMAT_WPROF) {
			pr_err("%s is folded text: it has stacks, not the threads and times that "
			       "-f %s needs; write folded, svg or pprof", o.input,
			       f == FORMAT_JSON ? "json" : f == FORMAT_THREADS ? "threads" : "wprof");
			err = -EINVAL;
			goto out;
		}
	}
	if (filtering(&o.filter)) {
		err = recording__filter(&rec, &o.filter);
		if (err) {
			pr_err("%s: cannot select threads: %s", o.input, err == -EINVAL ?
			       "its stacks do not say their threads" : strerror(-err));
			goto out;
		}
	}
	if (o.range) {
		err = cut_range(&rec, &o);
		if (err)
			goto out;
	}
	/* a line's frames are the same either way: only where its tag goes changes */
	if (o.tag_leaf) {
		err = recording__tag_leaf(&rec);
		if (err) {
			pr_err("%s: cannot move the tags to the leaf: %s", o.input, strerror(-err));
			goto out;
		}
	}
	err = outputs__open(&outs, o.outputs, o.nr_outputs);
	if (!err)
		err = outputs__write(&outs, &rec, o.group);
	if (folded && !o.quiet)
		pr_info("%s: folded text, %zu stacks", o.input, folded__nr(rec.lines));
	else if (!o.quiet) {
		report__summary(&rec, stderr, o.stats);
		if (o.stats)
			report__switch_kinds(&rec, stderr); /* from the counters it saved */
	}
out:
	outputs__abort(&outs);
	recording__free(&rec);
	free(o.pids);
	free(o.tids);
	return err ? 1 : 0;
}
