// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line (docs/cli.md): `bpfsym [record] ...` and `bpfsym report
 * ...`.  Parsing is strict: a bad number, a conflicting target or an unknown
 * option is one line on stderr and exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "view/frame_namer.h"
#include "model/hints.h"
#include "symbolize/kernel/kallsyms.h"
#include "record/record.h"
#include "report/report.h"
#include "view/format/report_flame.h"
#include "view/format/report_pprof.h"
#include "view/format/report_script.h"
#include "view/report_view.h"
#include "symbolize/symfs.h"
#include "base/util.h"

static const char record_usage[] =
"Usage: bpfsym [record] [TARGET] [OPTIONS] [-- COMMAND [ARGS...]]\n"
"       bpfsym report [FILE] [OPTIONS]\n"
"       bpfsym symbolize (--elf FILE | --pid PID | --kernel) [ADDR...]\n"
"\n"
"Sample kernel and user stacks of the whole system, some processes, or a\n"
"command, with BPF, and write a zstd-compressed report (bpfsym.data).\n"
"\n"
"Target (one; the whole system when none is given):\n"
"  -a, --all                 every process on every CPU\n"
"  -p, --pid PID[,PID...]    these processes and all their threads\n"
"  -G, --cgroup PATH         every task in this cgroup v2 and below it (a\n"
"                            container); PATH absolute or relative to the\n"
"                            unified hierarchy\n"
"  -- COMMAND [ARGS...]      run COMMAND, profile it and what it forks,\n"
"                            stop when it exits\n"
"\n"
"Options:\n"
"  -F, --freq HZ             samples per second per CPU (default 99)\n"
"  -d, --duration SECONDS    stop after this long (fractions allowed)\n"
"  -o, --output FILE         the report file (default bpfsym.data)\n"
"  -m, --mmap-pages PAGES    size of the ring buffer the BPF programs share\n"
"                            (every CPU's samples and mapping events): a\n"
"                            number of pages or a size with B/K/M/G, a power\n"
"                            of two pages, at most 1G (default: 2 s of deep\n"
"                            stacks at -F on every CPU, at least 1 MiB);\n"
"                            smaller loses samples sooner, counted in the\n"
"                            report\n"
"      --user-only           keep only the user side of each stack (kernel\n"
"                            threads are not sampled)\n"
"      --kernel-only         sample only kernel time, keep only kernel frames\n"
"      --map-anon FILE@PID,START,LEN[,OFFSET]\n"
"                            the bytes of FILE from OFFSET (default 0) were\n"
"                            copied to [START, START+LEN) of process PID: name\n"
"                            addresses there with FILE's symbols (a .so, an\n"
"                            executable or a .o; repeatable; numbers 0x.. or\n"
"                            decimal; PID must be running and recorded; the hint\n"
"                            follows it through fork until exec)\n"
"  -q, --quiet               no live status line\n"
"  -v, --verbose             libbpf and debug messages on stderr\n"
"  -h, --help                this help\n"
"\n"
"Recording ends on Ctrl-C, SIGTERM, -d, or when the command or every -p\n"
"process exits, always with a complete report.  Exit status: 0 success,\n"
"1 runtime failure, 2 usage or permission error.\n"
"\n"
"Examples:\n"
"  sudo bpfsym -d 10                      # whole system for 10 s\n"
"  sudo bpfsym -p 1234 -F 999 -o app.data # one process at 999 Hz\n"
"  sudo bpfsym -- make -j8                # a build and everything it runs\n"
"  sudo bpfsym -G system.slice/docker-ID.scope -d 30   # one container\n"
"  sudo bpfsym -p 257 --map-anon ./plugin.o@257,0x7f864c0000,0x60\n"
"  bpfsym report                          # the hottest functions\n"
"  bpfsym report --folded | flamegraph.pl > flame.svg\n";

static const char report_usage[] =
"Usage: bpfsym report [FILE] [OPTIONS]\n"
"\n"
"Print a recording (default FILE: bpfsym.data).\n"
"\n"
"Filters:\n"
"  --pid PID[,PID...]        only these processes\n"
"  --comm NAME[,NAME...]     only these process names\n"
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
"  -s, --sort KEY[,KEY...]   table order: self (default; alias samples), total,\n"
"                            comm (process), module (dso), symbol (sym); counts\n"
"                            most first, names A to Z; ties by self, total,\n"
"                            symbol, process, module\n"
"  --limit N                 table rows (default 50, 0: all)\n"
"  --pprof OUT               write a pprof profile (gzip-compressed profile.proto)\n"
"                            to OUT instead, for `go tool pprof`: values samples\n"
"                            and cpu (ns), labels pid, tid, comm, cgroup\n"
"  -h, --help                this help\n"
"\n"
"Examples:\n"
"  bpfsym report\n"
"  bpfsym report app.data --pid 1234 --limit 20\n"
"  bpfsym report --comm nginx --folded > nginx.folded\n"
"  bpfsym report --flamegraph flame.svg     # open it in a browser\n"
"  bpfsym report --sort total,comm --limit 0   # every row, callers first\n"
"  bpfsym report --perf-script > app.perf       # load in Firefox Profiler\n"
"  bpfsym report --kallsyms kallsyms.saved  # kernel names from a saved copy\n"
"  bpfsym report --pprof app.pb.gz && go tool pprof -top app.pb.gz\n"
"  bpfsym report --symfs /srv/host1-root     # user names from another machine's files\n";

int cli__usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bpfsym: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see bpfsym --help)\n", stderr);
	return EXIT_USAGE;
}

const char *cli__bad_option(char **argv)
{
	const char *arg = argv[optind - 1];

	return arg ? arg : "?";
}

/* Parse "1,2,3" into a new array of distinct, non-zero pids; 0 or -EINVAL. */
static int parse_pid_list(const char *s, uint32_t **out, size_t *nr)
{
	char *copy = strdup(s), *tok, *save = NULL;
	uint32_t *pids = NULL, *tmp, pid;
	size_t n = 0, i;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_u32(tok, &pid) || pid == 0) {
			err = -EINVAL;
			break;
		}
		for (i = 0; i < n && pids[i] != pid; i++)
			;
		if (i < n)
			continue;
		tmp = realloc(pids, (n + 1) * sizeof(*pids));
		if (!tmp) {
			err = -ENOMEM;
			break;
		}
		pids = tmp;
		pids[n++] = pid;
	}
	free(copy);
	if (!err && !n)
		err = -EINVAL;
	if (err) {
		free(pids);
		return err;
	}
	*out = pids;
	*nr = n;
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	enum { OPT_USER_ONLY = 256, OPT_KERNEL_ONLY, OPT_MAP_ANON };
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "user-only", no_argument, NULL, OPT_USER_ONLY },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
		{ "map-anon", required_argument, NULL, OPT_MAP_ANON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct record_opts o = { .freq = 99, .output = "bpfsym.data" };
	struct anon_hint *hints = NULL, *tmp;
	char why[128];
	uint32_t *pids = NULL;
	int c, all = 0, ret;

	opterr = 0;
	/* '+': stop at the first non-option, the start of COMMAND. */
	while ((c = getopt_long(argc, argv, "+:ap:G:F:d:o:m:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'p':
			free(pids);
			pids = NULL;
			o.nr_pids = 0;
			if (parse_pid_list(optarg, &pids, &o.nr_pids)) {
				ret = cli__usage_error("-p '%s': expected PID[,PID...] of positive numbers", optarg);
				goto out;
			}
			break;
		case 'G':
			if (!optarg[0]) {
				ret = cli__usage_error("-G: expected a cgroup path");
				goto out;
			}
			o.cgroup = optarg;
			break;
		case 'F':
			if (parse_u32(optarg, &o.freq) || o.freq == 0) {
				ret = cli__usage_error("-F '%s': expected a frequency of at least 1 Hz", optarg);
				goto out;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &o.duration) || !(o.duration > 0)) {
				ret = cli__usage_error("-d '%s': expected a positive number of seconds", optarg);
				goto out;
			}
			break;
		case 'o':
			if (!optarg[0]) {
				ret = cli__usage_error("-o: expected a file name");
				goto out;
			}
			o.output = optarg;
			break;
		case 'm':
			ret = parse_mmap_pages(optarg, (uint64_t)sysconf(_SC_PAGESIZE), &o.mmap_pages);
			if (ret) {
				ret = cli__usage_error("-m '%s': %s", optarg,
						       ret == -EDOM ? "expected a power of two pages (1, 2, 4, ... or 4K, 8K, ...)" :
						       ret == -ERANGE ? "expected 1 page to 1G" :
						       "expected a number of pages, or a size with B, K, M or G");
				goto out;
			}
			break;
		case OPT_USER_ONLY:
			o.user_only = true;
			break;
		case OPT_KERNEL_ONLY:
			o.kernel_only = true;
			break;
		case OPT_MAP_ANON:
			tmp = realloc(hints, (o.nr_hints + 1) * sizeof(*hints));
			if (!tmp) {
				ret = cli__usage_error("out of memory");
				goto out;
			}
			hints = tmp;
			if (anon_hint__parse(optarg, &hints[o.nr_hints], why, sizeof(why))) {
				ret = cli__usage_error("--map-anon '%s': %s", optarg, why);
				goto out;
			}
			o.nr_hints++;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			fputs(record_usage, stdout);
			ret = 0;
			goto out;
		case ':':
			ret = cli__usage_error("option '%s' needs a value", cli__bad_option(argv));
			goto out;
		default:
			ret = cli__usage_error("unknown option '%s'", cli__bad_option(argv));
			goto out;
		}
	}
	if (o.user_only && o.kernel_only) {
		ret = cli__usage_error("--user-only and --kernel-only exclude each other");
		goto out;
	}
	o.pids = pids;
	if (optind < argc) {
		o.target = RECORD_COMMAND;
		o.argv = &argv[optind];
	} else if (pids) {
		o.target = RECORD_PIDS;
	} else if (o.cgroup) {
		o.target = RECORD_CGROUP;
	}
	if (all + !!pids + !!o.argv + !!o.cgroup > 1) {
		ret = cli__usage_error("give one target: -a, -p PID, -G CGROUP, or -- COMMAND");
		goto out;
	}
	if (o.nr_hints && o.argv) {
		ret = cli__usage_error("--map-anon names a running process; it does not go with -- COMMAND");
		goto out;
	}
	o.hints = hints;
	if (o.verbose)
		log_set_level(LOG_DEBUG);
	ret = record__run(&o);
out:
	free(pids);
	free(hints);
	return ret;
}

/* Split "a,b,c" in place into a new array of pointers into @s. */
static int split_list(char *s, const char ***out, size_t *nr)
{
	const char **v = NULL, **tmp;
	char *tok, *save = NULL;
	size_t n = 0;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		tmp = realloc(v, (n + 1) * sizeof(*v));
		if (!tmp) {
			free(v);
			return -ENOMEM;
		}
		v = tmp;
		v[n++] = tok;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	*nr = n;
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	enum { OPT_PID = 256, OPT_COMM, OPT_FOLDED, OPT_LIMIT, OPT_KALLSYMS, OPT_FLAMEGRAPH,
	       OPT_PERF_SCRIPT, OPT_PPROF, OPT_SYMFS };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, OPT_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
		{ "perf-script", no_argument, NULL, OPT_PERF_SCRIPT },
		{ "sort", required_argument, NULL, 's' },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct view_opts vo = { .limit = 50 };
	const char *path = "bpfsym.data", **comms = NULL, *kallsyms = NULL, *flame = NULL;
	const char *pprof = NULL;
	uint32_t *pids = NULL;
	int c, folded = 0, script = 0, ret = EXIT_USAGE;
	char err[512] = "", *comm_arg = NULL;
	struct report *r = NULL;
	struct ksyms *ks = NULL;
	struct frame_namer *namer = NULL;
	const char *symfs_dir = NULL;
	struct symfs *symfs = NULL;
	uint64_t limit;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PID:
			free(pids);
			pids = NULL;
			if (parse_pid_list(optarg, &pids, &vo.nr_pids)) {
				cli__usage_error("--pid '%s': expected PID[,PID...] of positive numbers", optarg);
				goto out;
			}
			break;
		case OPT_COMM:
			free(comms);
			comms = NULL;
			free(comm_arg);
			comm_arg = strdup(optarg);
			if (!comm_arg || split_list(comm_arg, &comms, &vo.nr_comms)) {
				cli__usage_error("--comm '%s': expected NAME[,NAME...]", optarg);
				goto out;
			}
			break;
		case OPT_FOLDED:
			folded = 1;
			break;
		case OPT_PERF_SCRIPT:
			script = 1;
			break;
		case 's':
			if (view_sort__parse(&vo, optarg, err, sizeof(err))) {
				cli__usage_error("--sort '%s': %s", optarg, err);
				goto out;
			}
			break;
		case OPT_LIMIT:
			if (parse_u64(optarg, &limit)) {
				cli__usage_error("--limit '%s': expected a number of rows", optarg);
				goto out;
			}
			vo.limit = (size_t)limit;
			break;
		case OPT_KALLSYMS:
			if (!optarg[0]) {
				cli__usage_error("--kallsyms: expected a file name");
				goto out;
			}
			kallsyms = optarg;
			break;
		case OPT_FLAMEGRAPH:
			if (!optarg[0]) {
				cli__usage_error("--flamegraph: expected a file name");
				goto out;
			}
			flame = optarg;
			break;
		case OPT_PPROF:
			if (!optarg[0]) {
				cli__usage_error("--pprof: expected a file name");
				goto out;
			}
			pprof = optarg;
			break;
		case OPT_SYMFS:
			if (!optarg[0]) {
				cli__usage_error("--symfs: expected a directory");
				goto out;
			}
			symfs_dir = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			ret = 0;
			goto out;
		case ':':
			cli__usage_error("option '%s' needs a value", cli__bad_option(argv));
			goto out;
		default:
			cli__usage_error("unknown option '%s'", cli__bad_option(argv));
			goto out;
		}
	}
	if (folded + script + !!flame + !!pprof > 1) {
		cli__usage_error("give one format: --folded, --perf-script, --flamegraph or --pprof");
		goto out;
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		cli__usage_error("unexpected argument '%s'", argv[optind]);
		goto out;
	}
	vo.pids = pids;
	vo.comms = comms;

	ret = 1;
	r = report__open(path, err, sizeof(err));
	if (!r) {
		if (err[0])
			fprintf(stderr, "bpfsym: %s\n", err);
		else
			fprintf(stderr, "bpfsym: cannot read '%s': %s\n", path, strerror(errno));
		goto out;
	}
	if (kallsyms) {
		ks = ksyms__load(kallsyms);
		if (!ks) {
			fprintf(stderr, "bpfsym: --kallsyms '%s': %s\n", kallsyms, errno == ENODATA ?
				"no kernel text symbol in it (not a kallsyms file?)" : strerror(errno));
			goto out;
		}
		namer = frame_namer__new(r, ks, kallsyms, err, sizeof(err));
		if (!namer) {
			fprintf(stderr, "bpfsym: --kallsyms '%s': %s\n", kallsyms, err);
			goto out;
		}
		vo.namer = namer;
	}
	if (symfs_dir) {
		symfs = symfs__open(symfs_dir, r, NULL, err, sizeof(err));
		if (!symfs || (!namer && !(namer = frame_namer__new(r, NULL, NULL, err, sizeof(err))))) {
			fprintf(stderr, "bpfsym: --symfs '%s': %s\n", symfs_dir, err);
			goto out;
		}
		frame_namer__set_symfs(namer, symfs);
		vo.namer = namer;
	}
	if (!report__header(r)->complete)
		fprintf(stderr, "bpfsym: warning: '%s' is truncated: the recording did not finish; "
			"showing the %zu samples written before it stopped\n", path, report__nr_samples(r));
	if (pprof) {
		c = report_pprof__write(pprof, r, &vo);
		if (c)
			fprintf(stderr, "bpfsym: --pprof '%s': %s\n", pprof, strerror(-c));
		else
			ret = 0;
		goto out;
	}
	if (flame) {
		c = report_flame__write(flame, r, &vo, NULL);
		if (c) {
			fprintf(stderr, "bpfsym: --flamegraph '%s': %s\n", flame, strerror(-c));
			goto out;
		}
		ret = 0;
		goto out;
	}
	c = folded ? report_view__folded(stdout, r, &vo) :
	    script ? report_script__write(stdout, r, &vo) : report_view__table(stdout, r, &vo);
	if (fflush(stdout) || c) {
		fprintf(stderr, "bpfsym: printing the report failed: %s\n", strerror(c ? -c : errno));
		goto out;
	}
	ret = 0;
out:
	frame_namer__free(namer);
	symfs__free(symfs);
	ksyms__free(ks);
	report__free(r);
	free(pids);
	free(comms);
	free(comm_arg);
	return ret;
}

int main(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : NULL;

	if (verb && (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help"))) {
		fputs(record_usage, stdout);
		return 0;
	}
	if (verb && !strcmp(verb, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (verb && !strcmp(verb, "symbolize"))
		return cmd_symbolize(argc - 1, argv + 1);
	if (verb && !strcmp(verb, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (verb && verb[0] != '-')
		return cli__usage_error("unknown command '%s': expected record, report or symbolize", verb);
	return cmd_record(argc, argv);
}
