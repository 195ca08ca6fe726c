// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym [record] [TARGET] [OPTIONS] [-- COMMAND [ARGS...]]`: parse the
 * command line into struct record_opts, then record (record/record.h).
 * Parsing is strict: a bad number, a conflicting target or an unknown
 * option is one line on stderr and exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfsym.h"
#include "base/util.h"
#include "agent/agent.h"
#include "cli/cli.h"
#include "model/hints.h"
#include "record/record.h"
#include "report/report.h"

static const char record_usage[] =
"Usage: bpfsym [record] [TARGET] [OPTIONS] [-- COMMAND [ARGS...]]\n"
"       bpfsym report [FILE...] [OPTIONS]\n"
"       bpfsym symbolize (--elf FILE | --pid PID | --kernel) [ADDR...]\n"
"\n"
"Sample kernel and user stacks of the whole system, some processes, or a\n"
"command, with BPF, and write a zstd-compressed report (bpfsym.data).\n"
"\n"
"Target (one; the whole system when none is given):\n"
"  -a, --all                 every process on every CPU; with -- COMMAND,\n"
"                            until COMMAND exits (perf's -a -- COMMAND)\n"
"      --all-cpus            the same as -a (perf's name)\n"
"  -p, --pid PID[,PID...]    these processes and all their threads\n"
"  -G, --cgroup PATH         every task in this cgroup v2 and below it (a\n"
"                            container); PATH absolute or relative to the\n"
"                            unified hierarchy; -a -G PATH (perf's spelling)\n"
"                            is the same\n"
"  -- COMMAND [ARGS...]      run COMMAND, profile it and what it forks,\n"
"                            stop when it exits; after -a or -G: record\n"
"                            those until COMMAND exits\n"
"\n"
"Options:\n"
"  -F, --freq HZ             samples per second per CPU (default 99)\n"
"  -e, --event EVENT         cycles (the default; cpu-clock where the CPU has\n"
"                            no PMU), cpu-clock, or task-clock (sampled as\n"
"                            cpu-clock); perf's other events are refused\n"
"  -c, --count PERIOD        with -e cpu-clock: a sample every PERIOD ns of\n"
"                            CPU time, recorded as -F 1e9/PERIOD (bpfsym\n"
"                            samples by frequency); refused for cycles\n"
"  -d, --duration SECONDS    stop after this long (fractions allowed)\n"
"  -o, --output FILE         the report file (default bpfsym.data), created\n"
"                            0600; an existing FILE is not replaced, nor a\n"
"                            symbolic link followed, without -f\n"
"  -f, --force               replace an existing FILE (a link itself, never\n"
"                            its target) once the recording has started\n"
"  -m, --mmap-pages PAGES    size of the ring buffer the BPF programs share\n"
"                            (every CPU's samples and mapping events): a\n"
"                            number of pages or a size with B/K/M/G, a power\n"
"                            of two pages, at most 1G (default: 2 s of deep\n"
"                            stacks at -F on every CPU, at least 1 MiB);\n"
"                            smaller loses samples sooner, counted in the\n"
"                            report\n"
"      --call-graph MODE     how user stacks are walked: dwarf[,SIZE] (default;\n"
"                            perf's stack-copy SIZE checked, 8 to 65528, and\n"
"                            not used: bpfsym copies no stack):\n"
"                            by each file's call-frame tables (.eh_frame,\n"
"                            .debug_frame), built once per file and walked\n"
"                            in BPF, frame pointers where a file has none;\n"
"                            fp: frame pointers only; fp-kernel: the\n"
"                            kernel's own frame-pointer walk (no end reasons)\n"
"      --unwind-mem SIZE     cap on the call-frame tables' BPF map memory,\n"
"                            B/K/M/G (default 64M); files past it end their\n"
"                            stacks as \"no-table\", counted in the report\n"
"      --user-only           keep only the user side of each stack (kernel\n"
"                            threads are not sampled)\n"
"      --kernel-only         sample only kernel time, keep only kernel frames\n"
"      --no-interp           native frames only: no Python functions between\n"
"                            the interpreter's frames\n"
"      --off-cpu             also record the time threads spend off the CPU:\n"
"                            at each switch-out of a target, its kernel and\n"
"                            user stacks (walked as a sample's) and its state\n"
"                            (S sleeping, D disk, R preempted, other); the\n"
"                            time until its switch-in, summed in BPF by\n"
"                            stack (report --off-cpu, --wall)\n"
"      --off-cpu-thresh DUR  drop off-CPU intervals shorter than DUR, counted\n"
"                            (ns/us/ms/s; a bare number is ms, as perf's;\n"
"                            default 0: none dropped)\n"
"      --off-cpu-state LIST  keep only these states: S,D,R,other or all\n"
"                            (default all); -a --off-cpu-state D: disk waits\n"
"      --map-anon FILE@PID,START,LEN[,OFFSET]\n"
"                            the bytes of FILE from OFFSET (default 0) were\n"
"                            copied to [START, START+LEN) of process PID: name\n"
"                            addresses there with FILE's symbols (a .so, an\n"
"                            executable or a .o; repeatable; numbers 0x.. or\n"
"                            decimal; PID must be running and recorded; the hint\n"
"                            follows it through fork until exec)\n"
"      --switch-output[=signal|SIZE|TIME]\n"
"                            rotate: at each SIGUSR2 (signal, the default),\n"
"                            when the file reaches SIZE (B/K/M/G, at least\n"
"                            64K), or every TIME (s/m/h/d, at least 1s); the\n"
"                            file is renamed OUTPUT.<UTC YYYYmmddHHMMSSsss of\n"
"                            the switch> and a new OUTPUT begins (the last is\n"
"                            renamed too); each file stands alone; a full disk\n"
"                            costs samples (counted), not the recording\n"
"      --switch-max-files N  keep the N newest rotated files, delete older\n"
"      --max-size SIZE       stop once the file has SIZE bytes (B/K/M/G); it\n"
"                            ends a little above (not with --switch-output)\n"
"      --listen [ADDR:]PORT|unix:PATH\n"
"                            serve the pull endpoint while recording: GET\n"
"                            /debug/pprof/profile?seconds=N (the next N\n"
"                            seconds as a gzipped pprof, as Go's\n"
"                            net/http/pprof) and GET /metrics (Prometheus);\n"
"                            ADDR an IPv4 address or [IPv6], default\n"
"                            127.0.0.1 (0.0.0.0 shows profiles to the\n"
"                            network); a Host naming another server is 421;\n"
"                            unix:PATH: a unix socket, mode 0600 (root only)\n"
"      --listen-group GROUP  with --listen unix:PATH: the socket is 0660 in\n"
"                            GROUP and GROUP's members may connect too\n"
CLI_DEBUGINFOD_HELP
"  -g                        perf's: stacks are always recorded (perf -g is\n"
"                            --call-graph fp); a note says so\n"
"  -z, --compression-level[=N]\n"
"                            perf's (N 1 to 22): the file is always zstd, at\n"
"                            bpfsym's level; a note says so\n"
"  -t, --tid TID             refused: bpfsym records whole processes (-p)\n"
"  -C, --cpu CPUS            sample only these CPUs (perf's list: 0,2-3)\n"
"  -i, --no-inherit          refused: a target's new threads and children\n"
"                            are always recorded\n"
"  -q, --quiet               no live status line\n"
"  -v, --verbose             libbpf and debug messages on stderr\n"
"  -h, --help                this help\n"
"      --version             the version, then exit\n"
"\n"
"Recording ends on Ctrl-C, SIGTERM, -d, or when the command or every -p\n"
"process exits, always with a complete report.  Exit status: 0 success,\n"
"1 runtime failure, 2 usage or permission error.\n"
"\n"
"Examples:\n"
"  sudo bpfsym -d 10                      # whole system for 10 s\n"
"  sudo bpfsym -p 1234 -F 999 -o app.data # one process at 999 Hz\n"
"  sudo bpfsym -p 1234 --call-graph fp    # frame pointers only, as perf -g\n"
"  sudo bpfsym -- make -j8                # a build and everything it runs\n"
"  sudo bpfsym -a -g -- sleep 10          # perf's way: the system for 10 s\n"
"  sudo bpfsym -G system.slice/docker-ID.scope -d 30   # one container\n"
"  sudo bpfsym -p 1234 --off-cpu -d 10    # where it burns and where it waits\n"
"  bpfsym report --off-cpu --folded       # off-CPU time, us, by stack and state\n"
"  sudo bpfsym -p 257 --map-anon ./plugin.o@257,0x7f864c0000,0x60\n"
"  sudo bpfsym -a -F 19 --switch-output=1h --switch-max-files=24   # a day in hours\n"
"  sudo bpfsym -a --switch-output &  kill -USR2 $!   # cut a file now\n"
"  bpfsym report bpfsym.data.*            # rotated files, merged\n"
"  sudo bpfsym -a -F 49 --listen 127.0.0.1:7470   # the pull endpoint, then:\n"
"  go tool pprof -top 'http://127.0.0.1:7470/debug/pprof/profile?seconds=10'\n"
"  sudo bpfsym -a --listen unix:/run/bpfsym.sock --listen-group adm\n"
"  curl --unix-socket /run/bpfsym.sock http://localhost/metrics\n"
"  bpfsym report                          # the hottest functions\n"
"  bpfsym report --folded | flamegraph.pl > flame.svg\n";

void cli__record_help(FILE *out)
{
	fputs(record_usage, out);
}

#ifndef BPFSYM_VERSION
#define BPFSYM_VERSION "0.1"
#endif

/* Options without a short letter. */
enum { OPT_USER_ONLY = 256, OPT_KERNEL_ONLY, OPT_NO_INTERP, OPT_MAP_ANON, OPT_CALL_GRAPH, OPT_UNWIND_MEM,
       OPT_SWITCH_OUTPUT, OPT_SWITCH_MAX_FILES, OPT_LISTEN, OPT_LISTEN_GROUP, OPT_MAX_SIZE,
       OPT_VERSION, OPT_OFF_CPU, OPT_OFF_CPU_THRESH, OPT_OFF_CPU_STATE };

/* What the parse step fills: the options, and the arrays they point into. */
struct record_args {
	struct record_opts o;
	uint32_t *pids;
	struct anon_hint *hints;
	bool all;
	struct agent_opts agent;	/* --listen, --listen-group */
	bool freq_set;			/* -F given */
	uint64_t period;		/* -c: events per sample; 0: none */
	const char *event;		/* -e as typed; NULL: none */
	bool *cpus;			/* -C: one per CPU this machine can have */
	bool off_thresh_set;		/* --off-cpu-thresh given */
};

/*
 * --off-cpu-thresh: a duration with ns, us, ms or s into *@ns; a bare
 * number is milliseconds, perf's unit.  0 or -EINVAL.
 */
static int parse_off_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e6 },
	};
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0) || v > 86400e3)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].unit)) {
			*ns = (uint64_t)(v * units[i].mul + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

static void record_args__free(struct record_args *a)
{
	free(a->pids);
	free(a->hints);
	free(a->cpus);
}

/* Add one --map-anon hint: CLI_RUN, or the exit status. */
static int add_hint(struct record_args *a, const char *arg)
{
	struct anon_hint *tmp;
	char why[128];

	tmp = realloc(a->hints, (a->o.nr_hints + 1) * sizeof(*a->hints));
	if (!tmp)
		return cli__usage_error("out of memory");
	a->hints = tmp;
	if (anon_hint__parse(arg, &a->hints[a->o.nr_hints], why, sizeof(why)))
		return cli__usage_error("--map-anon '%s': %s", arg, why);
	a->o.nr_hints++;
	return CLI_RUN;
}

/*
 * --switch-output[=@arg]: signal (also bare), SIZE with B/K/M/G, TIME
 * with s/m/h/d (lower case: 1m is a minute, 1M a MiB, as in perf); a
 * bare number is neither.  CLI_RUN, or the exit status.
 */
static int parse_switch_output(struct rotate_opts *ro, const char *arg)
{
	static const char what[] = "expected signal, a size (B, K, M, G) of at least 64K, or a time (s, m, h, d) of at least 1s";
	size_t n = arg ? strlen(arg) : 0;

	if (!arg || !strcmp(arg, "signal")) {
		ro->mode = ROTATE_SIGNAL;
		return CLI_RUN;
	}
	if (n && strchr("smhd", arg[n - 1])) {
		ro->mode = ROTATE_TIME;
		if (parse_duration_ns(arg, &ro->time_ns) || ro->time_ns < ROTATE_MIN_TIME_NS)
			return cli__usage_error("--switch-output '%s': %s", arg, what);
		return CLI_RUN;
	}
	ro->mode = ROTATE_SIZE;
	if (!n || !strchr("BKMGbkg", arg[n - 1]) || parse_size(arg, &ro->size) || ro->size < ROTATE_MIN_SIZE)
		return cli__usage_error("--switch-output '%s': %s", arg, what);
	return CLI_RUN;
}

/* Say once on stderr how bpfsym reads a perf option that means something else here. */
static void note_once(unsigned int *noted, unsigned int bit, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note_once(unsigned int *noted, unsigned int bit, const char *fmt, ...)
{
	va_list ap;

	if (*noted & bit)
		return;
	*noted |= bit;
	va_start(ap, fmt);
	fputs("bpfsym: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

enum { NOTE_G = 1, NOTE_DWARF_SIZE = 2, NOTE_Z = 4, NOTE_TASK_CLOCK = 8, NOTE_PERIOD = 16 };
static unsigned int noted;

/*
 * --call-graph MODE[,SIZE], perf's spelling: dwarf's SIZE checked as perf
 * checks it (rounded up to 8 bytes, 8 to 65528), then not used: bpfsym
 * unwinds in BPF and copies no stack.  CLI_RUN, or the exit status.
 */
static int parse_call_graph(struct record_opts *o, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t n = comma ? (size_t)(comma - arg) : strlen(arg);
	unsigned long long size;
	char *end;

	if (n == 5 && !strncmp(arg, "dwarf", 5)) {
		o->call_graph = BPFSYM_USTACK_TABLES;
		if (!comma)
			return CLI_RUN;
		errno = 0;
		size = strtoull(comma + 1, &end, 0);
		if (!comma[1] || *end || errno || comma[1] == '-' || !size || size > 65528)
			return cli__usage_error("--call-graph '%s': expected dwarf,SIZE with SIZE 1 to 65528 bytes, as perf", arg);
		note_once(&noted, NOTE_DWARF_SIZE, "--call-graph %s: bpfsym unwinds in BPF and copies no stack; SIZE is not used", arg);
		return CLI_RUN;
	}
	if (comma)
		return cli__usage_error("--call-graph '%s': only dwarf takes a SIZE", arg);
	if (!strcmp(arg, "fp"))
		o->call_graph = BPFSYM_USTACK_FP;
	else if (!strcmp(arg, "fp-kernel"))
		o->call_graph = BPFSYM_USTACK_KERNEL_FP;
	else if (!strcmp(arg, "lbr"))
		return cli__usage_error("--call-graph lbr: bpfsym does not read the CPU's last branch records; use dwarf or fp");
	else
		return cli__usage_error("--call-graph '%s': expected dwarf[,SIZE], fp or fp-kernel", arg);
	return CLI_RUN;
}

/*
 * -C CPU-LIST as perf writes it ("0,2-3"): the CPUs to sample, each one
 * this machine can have.  CLI_RUN, or the exit status.
 */
static int parse_cpu_list(struct record_args *a, const char *arg)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	unsigned long lo, hi, c;
	const char *p = arg;
	char *end;

	if (n < 1)
		return cli__usage_error("-C: the number of CPUs is unknown: %s", strerror(errno));
	free(a->cpus);
	a->cpus = calloc((size_t)n, sizeof(*a->cpus));
	if (!a->cpus)
		return cli__usage_error("out of memory");
	for (;;) {
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		lo = hi = strtoul(p, &end, 10);
		if (*end == '-' && end[1] >= '0' && end[1] <= '9')
			hi = strtoul(end + 1, &end, 10);
		if (errno || hi < lo || hi >= (unsigned long)n)
			break;
		for (c = lo; c <= hi; c++)
			a->cpus[c] = true;
		if (!*end) {
			a->o.cpus = a->cpus;
			a->o.nr_cpus = (size_t)n;
			return CLI_RUN;
		}
		if (*end != ',')
			break;
		p = end + 1;
	}
	return cli__usage_error("-C '%s': expected CPUs 0 to %ld as perf writes them (0,2-3)", arg, n - 1);
}

/*
 * perf record's options that bpfsym takes with the nearest meaning (a note
 * where it differs), or refuses with the reason: a perf user never reads
 * "unknown option".  CLI_RUN, or the exit status.
 */
static int perf_option(struct record_args *a, int c, const char *arg, char **argv)
{
	uint32_t level;

	switch (c) {
	case 'g':
		note_once(&noted, NOTE_G, "-g: stacks are always recorded; user stacks are walked by call-frame "
			  "tables (perf -g: frame pointers, bpfsym's --call-graph fp)");
		return CLI_RUN;
	case 'z':
		if (arg && (parse_u32(arg, &level) || level < 1 || level > 22))
			return cli__usage_error("--compression-level '%s': expected 1 to 22, as perf", arg);
		note_once(&noted, NOTE_Z, "-z: recordings are always zstd-compressed, at bpfsym's own level");
		return CLI_RUN;
	case 'e':
		if (strcmp(arg, "cycles") && strcmp(arg, "cpu-cycles") && strcmp(arg, "cpu-clock") && strcmp(arg, "task-clock"))
			return cli__usage_error("-e '%s': bpfsym samples only cycles (cpu-clock without a PMU), cpu-clock or task-clock", arg);
		a->event = arg;
		return CLI_RUN;
	case 'c':
		if (parse_u64(arg, &a->period) || !a->period)
			return cli__usage_error("-c '%s': expected a period of at least 1 event", arg);
		return CLI_RUN;
	case OPT_MAX_SIZE:
		if (parse_size(arg, &a->o.max_size) || !a->o.max_size)
			return cli__usage_error("--max-size '%s': expected a size (B, K, M or G)", arg);
		return CLI_RUN;
	case OPT_VERSION:
		printf("bpfsym %s\n", BPFSYM_VERSION);
		return 0;
	case 't':
		return cli__usage_error("-t: bpfsym records whole processes, not single threads; use -p PID");
	case 'C':
		return parse_cpu_list(a, arg);
	case 'i':
		return cli__usage_error("--no-inherit: bpfsym always follows its targets' new threads and children");
	case ':':
		return cli__usage_error("option '%s' needs a value", cli__bad_option(argv));
	default:
		return cli__usage_error("unknown option '%s'", cli__bad_option(argv));
	}
}

/* --off-cpu and its settings: CLI_RUN, or the exit status. */
static int offcpu_option(struct record_args *a, int c, const char *arg)
{
	struct record_opts *o = &a->o;

	switch (c) {
	case OPT_OFF_CPU:
		o->off_cpu = true;
		return CLI_RUN;
	case OPT_OFF_CPU_THRESH:
		a->off_thresh_set = true;
		if (parse_off_duration(arg, &o->off_cpu_min_ns))
			return cli__usage_error("--off-cpu-thresh '%s': expected a duration (ns, us, ms or s; "
						"a bare number is ms)", arg);
		return CLI_RUN;
	default:
		if (rpt_offstate__parse(arg, &o->off_cpu_states))
			return cli__usage_error("--off-cpu-state '%s': expected S, D, R, other (comma-separated) or all",
						arg);
		return CLI_RUN;
	}
}

/* One option @c with @arg: CLI_RUN, or the exit status. */
static int record_option(struct record_args *a, int c, const char *arg, char **argv)
{
	struct record_opts *o = &a->o;
	int err;

	switch (c) {
	case 'a':
		a->all = true;
		return CLI_RUN;
	case 'p':
		free(a->pids);
		a->pids = NULL;
		o->nr_pids = 0;
		if (cli__parse_pid_list(arg, &a->pids, &o->nr_pids))
			return cli__usage_error("-p '%s': expected PID[,PID...] of positive numbers", arg);
		return CLI_RUN;
	case 'G':
		if (!arg[0])
			return cli__usage_error("-G: expected a cgroup path");
		o->cgroup = arg;
		return CLI_RUN;
	case 'F':
		a->freq_set = true;
		if (parse_u32(arg, &o->freq) || o->freq == 0)
			return cli__usage_error("-F '%s': expected a frequency of at least 1 Hz", arg);
		return CLI_RUN;
	case 'd':
		if (parse_seconds(arg, &o->duration) || !(o->duration > 0))
			return cli__usage_error("-d '%s': expected a positive number of seconds", arg);
		return CLI_RUN;
	case 'o':
		if (!arg[0])
			return cli__usage_error("-o: expected a file name");
		o->output = arg;
		return CLI_RUN;
	case 'm':
		err = parse_mmap_pages(arg, (uint64_t)sysconf(_SC_PAGESIZE), &o->mmap_pages);
		if (err)
			return cli__usage_error("-m '%s': %s", arg,
						err == -EDOM ? "expected a power of two pages (1, 2, 4, ... or 4K, 8K, ...)" :
						err == -ERANGE ? "expected 1 page to 1G" :
						"expected a number of pages, or a size with B, K, M or G");
		return CLI_RUN;
	case OPT_NO_INTERP:
		o->no_interp = true;
		return CLI_RUN;
	case OPT_OFF_CPU:
	case OPT_OFF_CPU_THRESH:
	case OPT_OFF_CPU_STATE:
		return offcpu_option(a, c, arg);
	case OPT_USER_ONLY:
		o->user_only = true;
		return CLI_RUN;
	case OPT_KERNEL_ONLY:
		o->kernel_only = true;
		return CLI_RUN;
	case OPT_MAP_ANON:
		return add_hint(a, arg);
	case OPT_CALL_GRAPH:
		return parse_call_graph(o, arg);
	case OPT_UNWIND_MEM:
		if (parse_size(arg, &o->unwind_mem) || o->unwind_mem < (1u << 20))
			return cli__usage_error("--unwind-mem '%s': expected a size of at least 1M (B, K, M or G)", arg);
		return CLI_RUN;
	case OPT_SWITCH_OUTPUT:
		return parse_switch_output(&o->rotate, arg);
	case OPT_SWITCH_MAX_FILES:
		if (parse_u32(arg, &o->rotate.max_files) || !o->rotate.max_files)
			return cli__usage_error("--switch-max-files '%s': expected a number of files, at least 1", arg);
		return CLI_RUN;
	case OPT_LISTEN:
		a->agent.listen = arg;
		return CLI_RUN;
	case OPT_LISTEN_GROUP:
		a->agent.group = arg;
		return CLI_RUN;
	case CLI_OPT_DEBUGINFOD: case CLI_OPT_NO_DEBUGINFOD:
		return cli__debuginfod(c, arg);
	case 'f':
		o->force = true;
		return CLI_RUN;
	case 'q':
		o->quiet = true;
		return CLI_RUN;
	case 'v':
		o->verbose = true;
		return CLI_RUN;
	case 'h':
		fputs(record_usage, stdout);
		return 0;
	default:
		return perf_option(a, c, arg, argv);
	}
}

/*
 * -e and -c: the clock asked for, and -c's period as the nearest frequency
 * (bpfsym samples by frequency).  cpu-clock counts nanoseconds, so its
 * period is exact; cycles' rate is the CPU's, unknown here: refused.
 * CLI_RUN, or the exit status.
 */
static int record_event(struct record_args *a)
{
	struct record_opts *o = &a->o;
	bool clock = a->event && (!strcmp(a->event, "cpu-clock") || !strcmp(a->event, "task-clock"));
	uint64_t hz;

	o->cpu_clock = clock;
	if (a->event && !strcmp(a->event, "task-clock"))
		note_once(&noted, NOTE_TASK_CLOCK, "-e task-clock: sampled as cpu-clock (the same clock, counted per CPU)");
	if (!a->period)
		return CLI_RUN;
	if (a->freq_set)
		return cli__usage_error("-c and -F exclude each other (a period, or a frequency)");
	if (!clock)
		return cli__usage_error("-c %llu: bpfsym samples by frequency and cannot know the rate of cycles; "
					"use -F HZ, or -e cpu-clock -c NANOSECONDS", (unsigned long long)a->period);
	hz = (1000000000ull + a->period / 2) / a->period;	/* ns per second */
	o->freq = hz ? (uint32_t)(hz > UINT32_MAX ? UINT32_MAX : hz) : 1;
	note_once(&noted, NOTE_PERIOD, "-c %llu: sampling at %u Hz, the nearest frequency (a sample every %llu ns of CPU time)",
		  (unsigned long long)a->period, o->freq, (unsigned long long)a->period);
	return CLI_RUN;
}

/* The target, from what was given; CLI_RUN, or the exit status. */
static int record_target(struct record_args *a, int argc, char **argv)
{
	struct record_opts *o = &a->o;
	struct stat st;

	if (o->user_only && o->kernel_only)
		return cli__usage_error("--user-only and --kernel-only exclude each other");
	o->pids = a->pids;
	if (optind < argc)
		o->argv = &argv[optind];
	if (a->pids && (a->all || o->argv || o->cgroup))
		return cli__usage_error("give one target: -p PID goes with none of -a, -G CGROUP, -- COMMAND");
	/* -a or -G with a command: the system or the cgroup while it runs, as perf's -a -- COMMAND. */
	if (a->pids)
		o->target = RECORD_PIDS;
	else if (o->cgroup)
		o->target = RECORD_CGROUP;	/* -a -G CGROUP: perf's spelling of the same */
	else if (o->argv && !a->all)
		o->target = RECORD_COMMAND;
	if ((a->off_thresh_set || o->off_cpu_states) && !o->off_cpu)
		return cli__usage_error("--off-cpu-thresh and --off-cpu-state go with --off-cpu");
	if (o->max_size && o->rotate.mode != ROTATE_OFF)
		return cli__usage_error("--max-size bounds one file; with --switch-output there are many");
	if (o->nr_hints && o->argv)
		return cli__usage_error("--map-anon names a running process; it does not go with -- COMMAND");
	o->hints = a->hints;
	/* TCP has no peer credentials: a group could only be a false promise there. */
	if (a->agent.group && (!a->agent.listen || strncmp(a->agent.listen, "unix:", 5)))
		return cli__usage_error("--listen-group goes with --listen unix:PATH (TCP has no peer credentials)");
	if (o->rotate.max_files && o->rotate.mode == ROTATE_OFF)
		return cli__usage_error("--switch-max-files goes with --switch-output");
	if (record_event(a) != CLI_RUN)
		return EXIT_USAGE;
	/* Rotation renames the output: a device or FIFO cannot be. */
	if (o->rotate.mode != ROTATE_OFF && stat(o->output, &st) == 0 && !S_ISREG(st.st_mode))
		return cli__usage_error("--switch-output: '%s' is not a regular file, it cannot be renamed", o->output);
	return CLI_RUN;
}

/* The parse step: CLI_RUN with @a filled, or the exit status. */
static int record_parse(struct record_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "user-only", no_argument, NULL, OPT_USER_ONLY },
		{ "no-interp", no_argument, NULL, OPT_NO_INTERP },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "off-cpu-thresh", required_argument, NULL, OPT_OFF_CPU_THRESH },
		{ "off-cpu-state", required_argument, NULL, OPT_OFF_CPU_STATE },
		{ "map-anon", required_argument, NULL, OPT_MAP_ANON },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "unwind-mem", required_argument, NULL, OPT_UNWIND_MEM },
		{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
		{ "switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "listen-group", required_argument, NULL, OPT_LISTEN_GROUP },
		CLI_DEBUGINFOD_OPTIONS,
		{ "compression-level", optional_argument, NULL, 'z' },
		{ "event", required_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'c' },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "tid", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "no-inherit", no_argument, NULL, 'i' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c, ret;

	opterr = 0;
	/* '+': stop at the first non-option, the start of COMMAND. */
	while ((c = getopt_long(argc, argv, "+:ap:G:F:d:o:fm:qvhgz::e:c:t:C:i", longopts, NULL)) != -1) {
		ret = record_option(a, c, optarg, argv);
		if (ret != CLI_RUN)
			return ret;
	}
	return record_target(a, argc, argv);
}

/* Record, serving the pull endpoint with --listen: bound first, so a port in use stops us before BPF. */
static int record_run(struct record_args *a)
{
	struct agent *ag = NULL;
	int ret;

	if (a->agent.listen) {
		ag = agent__listen(&a->agent);
		if (!ag)
			return 2;
		if (agent__start(ag)) {
			agent__free(ag);
			return 1;
		}
		a->o.hook = agent__hook(ag);
	}
	ret = record__run(&a->o);
	agent__free(ag);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { .o = { .freq = 99, .output = "bpfsym.data", .call_graph = BPFSYM_USTACK_TABLES } };
	int ret;

	ret = record_parse(&a, argc, argv);
	if (ret == CLI_RUN) {
		if (a.o.verbose)
			log_set_level(LOG_DEBUG);
		ret = record_run(&a);
	}
	record_args__free(&a);
	return ret;
}
