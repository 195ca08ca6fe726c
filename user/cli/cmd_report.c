// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym report [FILE...] [OPTIONS]`: parse the command line, read the file
 * (several: merged into one, report/report_merge.c), then print the
 * recording in the format asked (view/format/formats.h) with the namers
 * asked (--kallsyms, --symfs).
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/cli.h"
#include "report/report.h"
#include "symbolize/kernel/kallsyms.h"
#include "symbolize/symfs.h"
#include "view/format/formats.h"
#include "view/frame_namer.h"
#include "view/report_agg.h"
#include "view/report_view.h"
#include "view/view_ctr.h"

static const char report_usage[] =
"Usage: bpfsym report [FILE...] [OPTIONS]\n"
"\n"
"Print a recording (default FILE: bpfsym.data; -: stdin).  Several files (the\n"
"files of a rotated recording, or any recordings) are merged into one view:\n"
"samples together, times from the earliest file's start, counters summed; a\n"
"file given twice (same path, or same file by another name) is read once.\n"
"\n"
"Input:\n"
"  -i, --input FILE          a file to read (repeatable, perf's spelling; -:\n"
"                            stdin); a quoted glob such as 'bpfsym.data.*' is\n"
"                            expanded\n"
"\n"
"Filters:\n"
"  --pid PID[,PID...]        only these processes\n"
"  --tid TID[,TID...]        only these threads\n"
"  -c, --comms NAME[,NAME...]  only these process names (also --comm)\n"
"  --container ID            only this container's processes: its full id or a\n"
"                            unique prefix of 12+ hex digits (docker ps's short\n"
"                            id), as its cgroup v2 path names it (docker,\n"
"                            containerd/CRI, CRI-O, podman, Kubernetes)\n"
"\n"
"Off-CPU time (a recording made with `record --off-cpu`):\n"
"  --off-cpu                 every format shows the time threads spent off the\n"
"                            CPU (blocked, sleeping, waiting for a CPU) where\n"
"                            they left it, instead of CPU samples: the table in\n"
"                            ms, --folded in microseconds with the state as a\n"
"                            last frame ([sleeping], [disk], [preempted],\n"
"                            [other]), --pprof's default sample type off_cpu\n"
"  --wall                    both: wall-clock time per thread, each CPU sample\n"
"                            weighing the sampling period (1/freq), off-CPU\n"
"                            time its own\n"
"  --off-cpu-state LIST      only off-CPU time in these states: S (sleeping),\n"
"                            D (disk, uninterruptible), R (preempted), other;\n"
"                            comma-separated, or all\n"
"\n"
"Symbols:\n"
"  --kallsyms FILE           name kernel frames again from FILE, a copy of\n"
"                            /proc/kallsyms (of another boot, or saved later),\n"
"                            relocated by its _text minus the recorded one\n"
"                            (KASLR); a frame FILE does not cover is unnamed\n"
"  --symfs DIR               name user frames again from copies of the files\n"
"                            under DIR: DIR/.build-id/xx/rest[.debug], DIR/PATH\n"
"                            (same build-id only), DIR/usr/lib/debug; frames\n"
"                            DIR cannot name keep their recorded names\n"
"      --debuginfod[=URLS]   with --symfs: a binary DIR holds without its\n"
"                            debug file gets it by build-id from URLS (as\n"
"                            DEBUGINFOD_URLS, on whenever that is set)\n"
"      --no-debuginfod       never fetch debug files\n"
"\n"
"Format (default: a table of the hottest functions):\n"
"  --folded                  one line per distinct stack, COMM;ROOT;...;LEAF COUNT\n"
"                            (FlameGraph's folded format; kernel frames end in _[k])\n"
"  --flamegraph OUT.svg      write an interactive flame graph to OUT.svg (-:\n"
"                            stdout), one self-contained file: hover, click to\n"
"                            zoom, search; user, kernel and JIT frames in their\n"
"                            own colours\n"
"  --perf-script             every sample as `perf script` prints it, for Firefox\n"
"                            Profiler, speedscope, stackcollapse-perf.pl\n"
"  --stdio                   the table as text (perf's; the only table there is)\n"
"  -s, --sort KEY[,KEY...]   what a row is and its order, as perf's -s: the name\n"
"                            keys comm (process), pid (tid: the thread), module\n"
"                            (dso), symbol (sym) make the rows (default: comm,\n"
"                            module, symbol; -s comm: one row per process);\n"
"                            rows go by self (or total with --children), then\n"
"                            the name keys A to Z; the counts self (samples),\n"
"                            total and container (rows in none last) order\n"
"                            first where given\n"
"  --children                perf's children column: total (samples with the\n"
"                            row anywhere in their stack) first, the share\n"
"                            that orders rows and --percent-limit reads\n"
"  --no-children             self only (perf's Overhead); the default shows\n"
"                            self, then total, and orders by self\n"
"  --percent-limit PCT       leave out table rows whose share (self; total with\n"
"                            --children) is below PCT per cent\n"
"  --limit N                 table rows (default 50, 0: all)\n"
"  -q, --quiet               the table's rows only: no \"#\" lines, no warnings\n"
"  --header-only             the \"#\" lines about the recording only (samples,\n"
"                            losses, filters): no rows\n"
"  --pprof OUT               write a pprof profile (gzip-compressed profile.proto)\n"
"                            to OUT (-: stdout) instead, for `go tool pprof`: values samples\n"
"                            and cpu (ns), off_cpu (ns) of off-CPU time, labels\n"
"                            pid, tid, comm, cgroup (its path), container_id\n"
"  -h, --help                this help\n"
"\n"
"Examples:\n"
"  bpfsym report\n"
"  bpfsym report app.data --pid 1234 --limit 20\n"
"  bpfsym report bpfsym.data.2026*          # a rotated recording, merged\n"
"  bpfsym report -i 'bpfsym.data.*' --folded   # the same, globbed by bpfsym\n"
"  bpfsym report --comm nginx --folded > nginx.folded\n"
"  bpfsym report --flamegraph flame.svg     # open it in a browser\n"
"  bpfsym report --sort total,comm --limit 0   # every row, callers first\n"
"  bpfsym report --sort container           # each container's samples, its rows together\n"
"  bpfsym report --container 4f797c539e6c   # one container (docker ps's short id)\n"
"  bpfsym report --perf-script > app.perf       # load in Firefox Profiler\n"
"  bpfsym report --kallsyms kallsyms.saved  # kernel names from a saved copy\n"
"  bpfsym report --pprof app.pb.gz && go tool pprof -top app.pb.gz\n"
"  bpfsym report --symfs /srv/host1-root     # user names from another machine's files\n"
"  bpfsym report -s comm --children --percent-limit 5   # perf's view of the processes\n"
"  ssh host1 cat bpfsym.data | bpfsym report - --comms nginx --tid 4242\n"
"  bpfsym report --pprof - | go tool pprof -top /dev/stdin\n"
"  bpfsym report --off-cpu --folded > off.folded   # where threads wait, in us\n"
"  bpfsym report --wall --pid 1234 --flamegraph wall.svg\n"
"  bpfsym report --off-cpu --off-cpu-state D   # blocked in the kernel (disk)\n";

void cli__report_help(FILE *out)
{
	fputs(report_usage, out);
}

/* Options without a short letter; a format's is OPT_FORMAT + its row. */
enum {
	OPT_PID = 256, OPT_TID, OPT_LIMIT, OPT_KALLSYMS, OPT_SYMFS, OPT_CONTAINER, OPT_STDIO,
	OPT_CHILDREN, OPT_NO_CHILDREN, OPT_PERCENT_LIMIT, OPT_HEADER_ONLY, OPT_OFF_CPU, OPT_WALL,
	OPT_OFF_CPU_STATE, OPT_FORMAT
};
#define NR_OPTS 24	/* the options above, --comm, --comms, -i, -s, -q, -h, --[no-]debuginfod and the end */
/* Input files at most, whether given, globbed or both (report__merge's cap). */
#define MAX_INPUTS REPORT_MERGE_MAX
#define MAX_FORMATS 16

/* What the parse step fills. */
struct report_args {
	struct view_opts vo;
	char **paths;			/* the input files, in the order given */
	size_t nr_paths;
	const char *kallsyms, *symfs_dir;
	const struct report_format *fmt;
	const char *out;		/* a to_file format's OUT */
	unsigned int formats_given;	/* a bit per row: two formats are an error */
	uint32_t *pids, *tids;
	const char **comms;
	char *comm_arg;
	const char *container;		/* --container as given */
	uint64_t *ctr_cgroups;		/* its cgroups in the recording (view_ctr__resolve) */
	char ctr_full[CONTAINER_ID_LEN + 1];
};

static void report_args__free(struct report_args *a)
{
	for (size_t i = 0; i < a->nr_paths; i++)
		free(a->paths[i]);
	free(a->paths);
	free(a->pids);
	free(a->tids);
	free(a->comms);
	free(a->comm_arg);
	free(a->ctr_cgroups);
}

/* Append a copy of @path to the inputs.  CLI_RUN, or the exit status. */
static int add_input(struct report_args *a, const char *path)
{
	char **v;

	if (a->nr_paths >= MAX_INPUTS)
		return cli__usage_error("more than %d input files", MAX_INPUTS);
	v = realloc(a->paths, (a->nr_paths + 1) * sizeof(*v));
	if (!v)
		return cli__usage_error("out of memory");
	a->paths = v;
	v[a->nr_paths] = strdup(path);
	if (!v[a->nr_paths])
		return cli__usage_error("out of memory");
	a->nr_paths++;
	return CLI_RUN;
}

/*
 * -i @arg: the file, or when no file has that name and it has a glob's
 * characters, every name the glob matches, sorted (the shell's order).
 * CLI_RUN, or the exit status.
 */
static int add_input_glob(struct report_args *a, const char *arg)
{
	glob_t g;
	size_t i;
	int ret = CLI_RUN, err;

	if (!arg[0])
		return cli__usage_error("-i: expected a file name");
	if (!strpbrk(arg, "*?[") || access(arg, F_OK) == 0)
		return add_input(a, arg);
	err = glob(arg, GLOB_ERR, NULL, &g);
	if (err == GLOB_NOMATCH)
		return cli__usage_error("-i '%s': no file matches", arg);
	if (err)
		return cli__usage_error("-i '%s': %s", arg, err == GLOB_NOSPACE ? "out of memory" : "unreadable directory");
	for (i = 0; i < g.gl_pathc && ret == CLI_RUN; i++)
		ret = add_input(a, g.gl_pathv[i]);
	globfree(&g);
	return ret;
}

static int report_flag(struct report_args *a, int c, char **argv);

/* --percent-limit @arg: a share from 0 to 100.  CLI_RUN, or the exit status. */
static int parse_percent(struct report_args *a, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!arg[0] || *end || errno || !(v >= 0.0 && v <= 100.0))
		return cli__usage_error("--percent-limit '%s': expected a share from 0 to 100", arg);
	a->vo.percent_limit = v;
	return CLI_RUN;
}

/* One option @c with @arg: CLI_RUN, or the exit status. */
static int report_option(struct report_args *a, int c, const char *arg, char **argv)
{
	const struct report_format *f;
	uint64_t limit;
	char err[512];

	if (c >= OPT_FORMAT) {
		f = &report_formats[c - OPT_FORMAT];
		if (f->to_file && !arg[0])
			return cli__usage_error("--%s: expected a file name", f->name);
		a->fmt = f;
		a->out = f->to_file ? arg : NULL;
		a->formats_given |= 1u << (c - OPT_FORMAT);
		return CLI_RUN;
	}
	switch (c) {
	case OPT_PID:
		free(a->pids);
		a->pids = NULL;
		if (cli__parse_pid_list(arg, &a->pids, &a->vo.nr_pids))
			return cli__usage_error("--pid '%s': expected PID[,PID...] of positive numbers", arg);
		return CLI_RUN;
	case OPT_TID:
		free(a->tids);
		a->tids = NULL;
		if (cli__parse_pid_list(arg, &a->tids, &a->vo.nr_tids))
			return cli__usage_error("--tid '%s': expected TID[,TID...] of positive numbers", arg);
		return CLI_RUN;
	case 'c':
		free(a->comms);
		a->comms = NULL;
		free(a->comm_arg);
		a->comm_arg = strdup(arg);
		if (!a->comm_arg || cli__split_list(a->comm_arg, &a->comms, &a->vo.nr_comms))
			return cli__usage_error("--comms '%s': expected NAME[,NAME...]", arg);
		return CLI_RUN;
	case OPT_CONTAINER:
		if (!container__valid_prefix(arg))
			return cli__usage_error("--container '%s': expected %d to %d lowercase hex digits "
						"of a container id", arg, CONTAINER_SHORT_LEN, CONTAINER_ID_LEN);
		a->container = arg;
		return CLI_RUN;
	case 's':
		if (view_sort__parse(&a->vo, arg, err, sizeof(err)))
			return cli__usage_error("--sort '%s': %s", arg, err);
		return CLI_RUN;
	case OPT_LIMIT:
		if (parse_u64(arg, &limit))
			return cli__usage_error("--limit '%s': expected a number of rows", arg);
		a->vo.limit = (size_t)limit;
		return CLI_RUN;
	case OPT_KALLSYMS:
		if (!arg[0])
			return cli__usage_error("--kallsyms: expected a file name");
		a->kallsyms = arg;
		return CLI_RUN;
	case 'i':
		return add_input_glob(a, arg);
	case OPT_SYMFS:
		if (!arg[0])
			return cli__usage_error("--symfs: expected a directory");
		a->symfs_dir = arg;
		return CLI_RUN;
	case CLI_OPT_DEBUGINFOD: case CLI_OPT_NO_DEBUGINFOD:
		return cli__debuginfod(c, arg);
	case OPT_PERCENT_LIMIT:
		return parse_percent(a, arg);
	case OPT_OFF_CPU_STATE:
		if (rpt_offstate__parse(arg, &a->vo.off_states))
			return cli__usage_error("--off-cpu-state '%s': expected S, D, R, other (comma-separated) "
						"or all", arg);
		return CLI_RUN;
	default:
		return report_flag(a, c, argv);
	}
}

/* An option without a value, or getopt's complaint.  CLI_RUN, or the exit status. */
static int report_flag(struct report_args *a, int c, char **argv)
{
	switch (c) {
	case OPT_STDIO:
		return CLI_RUN;	/* the table is text already */
	case OPT_CHILDREN:
		a->vo.children = VIEW_CHILDREN_ON;
		return CLI_RUN;
	case OPT_NO_CHILDREN:
		a->vo.children = VIEW_CHILDREN_OFF;
		return CLI_RUN;
	case 'q':
		a->vo.quiet = true;
		return CLI_RUN;
	case OPT_HEADER_ONLY:
		a->vo.header_only = true;
		return CLI_RUN;
	case OPT_OFF_CPU: case OPT_WALL:
		if (a->vo.metric != VIEW_METRIC_CPU &&
		    a->vo.metric != (c == OPT_OFF_CPU ? VIEW_METRIC_OFFCPU : VIEW_METRIC_WALL))
			return cli__usage_error("give one of --off-cpu and --wall");
		a->vo.metric = c == OPT_OFF_CPU ? VIEW_METRIC_OFFCPU : VIEW_METRIC_WALL;
		return CLI_RUN;
	case 'h':
		cli__report_help(stdout);
		return 0;
	case ':':
		return cli__usage_error("option '%s' needs a value", cli__bad_option(argv));
	default:
		return cli__usage_error("unknown option '%s'", cli__bad_option(argv));
	}
}

/* The options: the fixed ones, then one per row of report_formats. */
static void report_longopts(struct option *v)
{
	static const struct option fixed[NR_OPTS] = {
		{ "input", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "comm", required_argument, NULL, 'c' },
		{ "comms", required_argument, NULL, 'c' },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "header-only", no_argument, NULL, OPT_HEADER_ONLY },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "off-cpu-state", required_argument, NULL, OPT_OFF_CPU_STATE },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "sort", required_argument, NULL, 's' },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		CLI_DEBUGINFOD_OPTIONS,
		{ "container", required_argument, NULL, OPT_CONTAINER },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int i, n = 0;

	for (i = 0; fixed[i].name; i++)
		v[n++] = fixed[i];
	for (i = 0; report_formats[i].name && i < MAX_FORMATS; i++)
		v[n++] = (struct option){ report_formats[i].name,
					  report_formats[i].to_file ? required_argument : no_argument,
					  NULL, OPT_FORMAT + i };
	v[n] = (struct option){ 0 };
}

/*
 * Whether inputs @x and @y are one file: the same name, or the same
 * device and inode (another name, a link); stdin ("-") only as itself.
 */
static bool same_input(const char *x, const struct stat *sx, bool okx, const char *y)
{
	struct stat sy;

	if (!strcmp(x, y))
		return true;
	if (!okx || !strcmp(x, "-") || !strcmp(y, "-") || stat(y, &sy))
		return false;
	return sx->st_dev == sy.st_dev && sx->st_ino == sy.st_ino;
}

/*
 * Drop the inputs that name a file given before, with a note: merged, a
 * file given twice would count its samples twice (perf reads one -i).
 * A name that cannot be stat'ed stays, for its open to say why.
 */
static void dedupe_inputs(struct report_args *a)
{
	size_t i, j, n = 0;
	struct stat st;
	bool ok;

	for (i = 0; i < a->nr_paths; i++) {
		ok = strcmp(a->paths[i], "-") && !stat(a->paths[i], &st);
		for (j = 0; j < n && !same_input(a->paths[i], &st, ok, a->paths[j]); j++)
			;
		if (j < n) {
			if (!a->vo.quiet)
				pr_warn("bpfsym: note: '%s' is the file '%s' given before: read once\n",
					a->paths[i], a->paths[j]);
			free(a->paths[i]);
			continue;
		}
		a->paths[n++] = a->paths[i];
	}
	a->nr_paths = n;
}

/* The parse step: CLI_RUN with @a filled, or the exit status. */
static int report_parse(struct report_args *a, int argc, char **argv)
{
	struct option longopts[NR_OPTS + MAX_FORMATS + 1];
	int c, ret;

	report_longopts(longopts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:s:c:qh", longopts, NULL)) != -1) {
		ret = report_option(a, c, optarg, argv);
		if (ret != CLI_RUN)
			return ret;
	}
	/* Repeating one format is no conflict: its last OUT counts. */
	if (a->formats_given & (a->formats_given - 1))
		return cli__usage_error("give one format: --folded, --perf-script, --flamegraph or --pprof");
	/* FILE... after the options (getopt moved them there): the shell expanded any glob. */
	for (; optind < argc; optind++) {
		ret = add_input(a, argv[optind]);
		if (ret != CLI_RUN)
			return ret;
	}
	if (!a->nr_paths && (ret = add_input(a, "bpfsym.data")) != CLI_RUN)
		return ret;
	dedupe_inputs(a);
	a->vo.pids = a->pids;
	a->vo.tids = a->tids;
	a->vo.comms = a->comms;
	return CLI_RUN;
}

/* What the run step opens and frees. */
struct report_run {
	struct report *r;
	struct ksyms *ks;
	struct frame_namer *namer;
	struct symfs *symfs;
};

/* --kallsyms and --symfs: the namers of @a's view.  0, or -1 (printed). */
static int open_namers(struct report_args *a, struct report_run *run)
{
	char err[512] = "";

	if (a->kallsyms) {
		run->ks = ksyms__load(a->kallsyms);
		if (!run->ks) {
			pr_err("bpfsym: --kallsyms '%s': %s\n", a->kallsyms, errno == ENODATA ?
				"no kernel text symbol in it (not a kallsyms file?)" : strerror(errno));
			return -1;
		}
		run->namer = frame_namer__new(run->r, run->ks, a->kallsyms, err, sizeof(err));
		if (!run->namer) {
			pr_err("bpfsym: --kallsyms '%s': %s\n", a->kallsyms, err);
			return -1;
		}
		a->vo.namer = run->namer;
	}
	if (a->symfs_dir) {
		run->symfs = symfs__open(a->symfs_dir, run->r, NULL, err, sizeof(err));
		if (!run->symfs || (!run->namer &&
				    !(run->namer = frame_namer__new(run->r, NULL, NULL, err, sizeof(err))))) {
			pr_err("bpfsym: --symfs '%s': %s\n", a->symfs_dir, err);
			return -1;
		}
		frame_namer__set_symfs(run->namer, run->symfs);
		a->vo.namer = run->namer;
	}
	return 0;
}

/*
 * --off-cpu or --wall of a recording without off-CPU time: one line
 * saying how to make one, and true (there is nothing to show, and a wall
 * view of CPU samples alone would read as the threads never waiting).
 */
static bool no_offcpu(const struct report_args *a, const struct report *r)
{
	if (a->vo.metric == VIEW_METRIC_CPU || report__header(r)->off_cpu || report__nr_offcpu(r))
		return false;
	pr_err("bpfsym: --%s: the recording holds no off-CPU time: record it with `bpfsym record --off-cpu`\n",
	       a->vo.metric == VIEW_METRIC_WALL ? "wall" : "off-cpu");
	return true;
}

/* A view past agg__visits_max(): one line saying so.  The exit status. */
static int too_deep(const struct report *r)
{
	pr_err("bpfsym: the recording's samples have stacks of more than %" PRIu64 " frames to walk (8 "
	       "per byte of the files): refused, as made to exhaust memory\n", agg__visits_max(r));
	return 1;
}

/* Write @run's recording as @a asks.  The exit status. */
static int write_report(const struct report_args *a, const struct report_run *run)
{
	const struct report_format *f = a->fmt ? a->fmt : &report_format_table;
	int err;

	if (f->to_file) {
		err = f->write(a->out, run->r, &a->vo);
		if (err == -E2BIG)
			return too_deep(run->r);
		if (err) {
			pr_err("bpfsym: --%s '%s': %s\n", f->name, a->out, strerror(-err));
			return 1;
		}
		return 0;
	}
	err = f->fprint(stdout, run->r, &a->vo);
	if (err == -E2BIG)
		return too_deep(run->r);
	if (fflush(stdout) || err) {
		pr_err("bpfsym: printing the report failed: %s\n", strerror(err ? -err : errno));
		return 1;
	}
	return 0;
}

/*
 * Open @path ("-": stdin), saying why not, and warn (unless @quiet) when
 * it is truncated.  NULL (printed) on failure.
 */
static struct report *open_one(const char *path, bool quiet)
{
	char err[512] = "";
	bool in = !strcmp(path, "-");
	struct report *r = in ? report__open_fd(STDIN_FILENO, "stdin", err, sizeof(err)) :
				report__open(path, err, sizeof(err));

	if (!r) {
		if (err[0])
			pr_err("bpfsym: %s\n", err);
		else
			pr_err("bpfsym: cannot read '%s': %s\n", path, strerror(errno));
		return NULL;
	}
	if (!report__header(r)->complete && !quiet)
		pr_warn("bpfsym: warning: '%s' is truncated: the recording did not finish; "
			"showing the %zu samples written before it stopped\n", path, report__nr_samples(r));
	return r;
}

/* Every input, merged into one when there are several.  NULL (printed) on failure. */
static struct report *open_inputs(const struct report_args *a)
{
	struct report **v, *r = NULL;
	char warn[256] = "";
	size_t i, n = 0;

	if (a->nr_paths == 1)
		return open_one(a->paths[0], a->vo.quiet);
	v = calloc(a->nr_paths, sizeof(*v));
	if (!v) {
		pr_err("bpfsym: out of memory\n");
		return NULL;
	}
	for (n = 0; n < a->nr_paths; n++)
		if (!(v[n] = open_one(a->paths[n], a->vo.quiet)))
			break;
	if (n == a->nr_paths) {
		r = report__merge(v, n, warn, sizeof(warn));	/* frees v's reports */
		n = 0;
		if (!r)
			pr_err("bpfsym: merging %zu files failed: %s\n", a->nr_paths,
			       errno == E2BIG ? "past the cap on ids, samples or memory of one report" :
			       strerror(errno));
		else if (warn[0] && !a->vo.quiet)
			pr_warn("bpfsym: warning: %s\n", warn);
	}
	for (i = 0; i < n; i++)
		report__free(v[i]);
	free(v);
	return r;
}

/* The run step.  The exit status. */
static int report_run(struct report_args *a)
{
	struct report_run run = {};
	char err[256] = "";
	int ret = 1;

	run.r = open_inputs(a);
	if (!run.r)
		goto out;
	if (open_namers(a, &run) || no_offcpu(a, run.r))
		goto out;
	/* The prefix becomes the one container it names in this recording, and its cgroups. */
	if (a->container && view_ctr__resolve(run.r, a->container, &a->ctr_cgroups, &a->vo.nr_cgroups,
					      a->ctr_full, err, sizeof(err))) {
		pr_err("bpfsym: --container '%s': %s\n", a->container, err[0] ? err : strerror(ENOMEM));
		ret = 2;
		goto out;
	}
	if (a->container) {
		a->vo.container = a->ctr_full;
		a->vo.cgroups = a->ctr_cgroups;
	}
	ret = write_report(a, &run);
out:
	frame_namer__free(run.namer);
	symfs__free(run.symfs);
	ksyms__free(run.ks);
	report__free(run.r);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .vo = { .limit = 50 } };
	int ret;

	ret = report_parse(&a, argc, argv);
	if (ret == CLI_RUN)
		ret = report_run(&a);
	report_args__free(&a);
	return ret;
}
