// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym symbolize`: an addr2line for the symbolizer itself (docs/cli.md).
 * Every address goes through the same code as a sampled one (modules,
 * images shared by build-id, debug files, demangling), so scripts and tests
 * can ask the symbolizer directly what a recording would say.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/procmap.h"
#include "symbolize/symbolizer.h"
#include "base/util.h"

static const char symbolize_usage[] =
"Usage: bpfsym symbolize --elf FILE [--file-offset] [ADDR...]\n"
"       bpfsym symbolize --pid PID [ADDR...]\n"
"       bpfsym symbolize --kernel [--kallsyms FILE] [ADDR...]\n"
"\n"
"Name addresses the way a recording would, one output line per address,\n"
"in order.  Addresses are hexadecimal (0x optional, as addr2line reads\n"
"them), from the arguments or, when none are given, one per line on stdin.\n"
"\n"
"  --elf FILE          ADDR is a virtual address of FILE (as addr2line -e\n"
"                      takes it; for a relocatable .o, a file offset)\n"
"  --file-offset       with --elf: ADDR is an offset in FILE\n"
"  --pid PID           ADDR is an address in process PID, now (root)\n"
"  --kernel            ADDR is a kernel address (/proc/kallsyms)\n"
"  --kallsyms FILE     with --kernel: read kernel symbols from FILE\n"
"  --debug-dir DIR     debug files by build-id under DIR/.build-id\n"
"                      (default /usr/lib/debug)\n"
"  --no-demangle       print C++ and Rust names as they are in the file\n"
"  --debuginfod[=URLS] fetch debug files by build-id from URLS (default:\n"
"                      DEBUGINFOD_URLS, on whenever it is set)\n"
"  --no-debuginfod     never fetch debug files\n"
"  -v, --verbose       say why an address has no name, on stderr\n"
"  -h, --help          this help\n"
"\n"
"Output:\n"
"  0xADDR SYMBOL+0xOFFSET MODULE\n"
"  0xADDR ?? MODULE            (module known, no symbol)\n"
"  0xADDR ?? [unknown]         (no mapping)\n"
"\n"
"Examples:\n"
"  bpfsym symbolize --elf /usr/lib/x86_64-linux-gnu/libc.so.6 0x2a1c0\n"
"  sudo bpfsym symbolize --pid 1234 7f3a12c45e10 55d0c0de1234\n"
"  sudo bpfsym symbolize --kernel ffffffff81e00010\n"
"  nm -D --defined-only libfoo.so | awk '{print $1}' | bpfsym symbolize --elf libfoo.so\n";

void cli__symbolize_help(FILE *out)
{
	fputs(symbolize_usage, out);
}

enum what { W_NONE, W_ELF, W_PID, W_KERNEL };

struct symbolize_ctx {
	enum what what;
	const char *elf;
	bool file_offset, verbose;
	uint32_t pid;
	struct symbolizer *sym;
	struct proc_table *procs;
	struct proc *proc;
	int status;		/* 1 once an address or a file was bad */
};

static void print_frame(const struct symbolize_ctx *c, uint64_t addr, const struct sym_frame *f)
{
	const char *module = f->module ? f->module->rpt.path : "[unknown]";

	if (f->sym)
		printf("0x%" PRIx64 " %s+0x%" PRIx64 " %s\n", addr, f->sym, f->sym_off, module);
	else
		printf("0x%" PRIx64 " ?? %s\n", addr, module);
	if (c->verbose && !f->sym)
		pr_err("bpfsym: symbolize: 0x%" PRIx64 ": %s\n", addr, rpt_reason__str(f->reason));
}

/* One address as the user wrote it; a bad one still gets its output line. */
static void symbolize_one(struct symbolize_ctx *c, const char *text)
{
	struct sym_frame f;
	uint64_t addr;
	int err;

	if (parse_hex_u64(text, &addr)) {
		pr_err("bpfsym: symbolize: '%s': not a hexadecimal address\n", text);
		printf("%s ?? [invalid]\n", text);
		c->status = 1;
		return;
	}
	switch (c->what) {
	case W_ELF:
		err = symbolizer__elf(c->sym, c->elf, addr, c->file_offset, &f);
		if (err && !c->status) {
			pr_err("bpfsym: symbolize: '%s': %s\n", c->elf,
				err == -ENOEXEC ? "not a regular ELF file" : strerror(-err));
			c->status = 1;
		}
		break;
	case W_PID:
		symbolizer__user(c->sym, c->pid, c->proc, addr, &f);
		break;
	default:
		symbolizer__kernel(c->sym, addr, &f);
		break;
	}
	print_frame(c, addr, &f);
}

/* Addresses from stdin, one per line; blank lines are skipped. */
static void symbolize_stdin(struct symbolize_ctx *c)
{
	char *line = NULL, *p, *end;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		end = p + strlen(p);
		while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (*p)
			symbolize_one(c, p);
	}
	free(line);
}

/* The model of process @pid as it is now, from /proc/PID/maps. */
static int load_process(struct symbolize_ctx *c)
{
	char path[64];
	int err;

	c->procs = proc_table__new(1);
	if (!c->procs)
		return -errno;
	c->proc = proc_table__add(c->procs, c->pid, 0);
	if (!c->proc)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%u/maps", c->pid);
	err = proc__load_maps(c->proc, path);
	return err < 0 ? err : 0;
}

/* Options without a short letter. */
enum { OPT_ELF = 256, OPT_FILE_OFFSET, OPT_PID, OPT_KERNEL, OPT_KALLSYMS, OPT_DEBUG_DIR,
       OPT_NO_DEMANGLE };

/* One option @opt with @arg into @c and @so: CLI_RUN, or the exit status. */
static int symbolize_option(struct symbolize_ctx *c, struct symbolizer_opts *so, int opt,
			    const char *arg, char **argv, int *nr_what)
{
	switch (opt) {
	case OPT_ELF:
		if (!arg[0])
			return cli__usage_error("--elf: expected a file name");
		c->what = W_ELF;
		c->elf = arg;
		(*nr_what)++;
		return CLI_RUN;
	case OPT_FILE_OFFSET:
		c->file_offset = true;
		return CLI_RUN;
	case OPT_PID:
		if (parse_u32(arg, &c->pid) || !c->pid)
			return cli__usage_error("--pid '%s': expected a positive process id", arg);
		c->what = W_PID;
		(*nr_what)++;
		return CLI_RUN;
	case OPT_KERNEL:
		c->what = W_KERNEL;
		(*nr_what)++;
		return CLI_RUN;
	case OPT_KALLSYMS:
		so->kallsyms = arg;
		return CLI_RUN;
	case OPT_DEBUG_DIR:
		so->debug_root = arg;
		return CLI_RUN;
	case OPT_NO_DEMANGLE:
		so->no_demangle = 1;
		return CLI_RUN;
	case CLI_OPT_DEBUGINFOD: case CLI_OPT_NO_DEBUGINFOD:
		return cli__debuginfod(opt, arg);
	case 'v':
		c->verbose = true;
		log_set_level(LOG_DEBUG);
		return CLI_RUN;
	case 'h':
		cli__symbolize_help(stdout);
		return 0;
	case ':':
		return cli__usage_error("option '%s' needs a value", cli__bad_option(argv));
	default:
		return cli__usage_error("unknown option '%s'", cli__bad_option(argv));
	}
}

/* The parse step: CLI_RUN with @c and @so filled, or the exit status. */
static int symbolize_parse(struct symbolize_ctx *c, struct symbolizer_opts *so, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "elf", required_argument, NULL, OPT_ELF },
		{ "file-offset", no_argument, NULL, OPT_FILE_OFFSET },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		CLI_DEBUGINFOD_OPTIONS,
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int opt, nr_what = 0, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		ret = symbolize_option(c, so, opt, optarg, argv, &nr_what);
		if (ret != CLI_RUN)
			return ret;
	}
	if (nr_what != 1)
		return cli__usage_error("symbolize: give one of --elf FILE, --pid PID, --kernel");
	if (c->file_offset && c->what != W_ELF)
		return cli__usage_error("symbolize: --file-offset goes with --elf");
	if (so->kallsyms && c->what != W_KERNEL)
		return cli__usage_error("symbolize: --kallsyms goes with --kernel");
	if (c->what == W_KERNEL)
		so->no_kernel = 0;
	return CLI_RUN;
}

/* The run step: the addresses of argv[optind...], or of stdin.  The exit status. */
static int symbolize_run(struct symbolize_ctx *c, const struct symbolizer_opts *so,
			 int argc, char **argv)
{
	int err, i;

	c->sym = symbolizer__new(so);
	if (!c->sym)
		return 1;	/* symbolizer__new said why */
	if (c->what == W_KERNEL && symbolizer__kernel_restricted(c->sym))
		pr_err("bpfsym: symbolize: '%s' shows every address as 0 (kptr_restrict): "
			"kernel addresses cannot be named; run as root\n",
			so->kallsyms ? so->kallsyms : "/proc/kallsyms");
	if (c->what == W_PID) {
		err = load_process(c);
		if (err) {
			pr_err("bpfsym: symbolize: pid %u: cannot read its mappings: %s\n",
				c->pid, strerror(-err));
			return 1;
		}
	}
	if (optind < argc) {
		for (i = optind; i < argc; i++)
			symbolize_one(c, argv[i]);
	} else {
		symbolize_stdin(c);
	}
	if (fflush(stdout)) {
		pr_err("bpfsym: symbolize: writing the output failed: %s\n", strerror(errno));
		c->status = 1;
	}
	return c->status;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolizer_opts so = { .no_kernel = 1 };
	struct symbolize_ctx c = {};
	int ret;

	ret = symbolize_parse(&c, &so, argc, argv);
	if (ret == CLI_RUN)
		ret = symbolize_run(&c, &so, argc, argv);
	proc_table__free(c.procs);
	symbolizer__free(c.sym);
	return ret;
}
