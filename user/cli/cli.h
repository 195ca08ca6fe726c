/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli: the subcommands' command lines (docs/cli.md), and what they share.
 * Each subcommand is a parse step (argv -> its options, or an exit status)
 * and a run step.  A usage error is one line on stderr and exit status 2.
 */
#ifndef BPFSYM_CLI_H
#define BPFSYM_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_USAGE 2
/* A parse step's "go on and run" (every other value is an exit status). */
#define CLI_RUN (-1)

/*
 * Print "bpfsym: MESSAGE (see bpfsym CMD --help)", CMD the subcommand
 * running (cli__set_command; none: "bpfsym --help"); returns EXIT_USAGE.
 */
int cli__usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The subcommand whose command line is parsed ("report"; NULL: the bare
 * `bpfsym`, which records), named by cli__usage_error().  @verb must
 * outlive the parse (a literal, or argv).
 */
void cli__set_command(const char *verb);

/* The option getopt just refused, as the user typed it. */
const char *cli__bad_option(char **argv);

/*
 * Parse "1,2,3" into a new array (*@out, freed by the caller) of distinct,
 * non-zero pids, *@nr set.  0, or -EINVAL (malformed or empty), -ENOMEM.
 */
int cli__parse_pid_list(const char *s, uint32_t **out, size_t *nr);

/*
 * Split "a,b,c" in place into a new array (*@out, freed by the caller; its
 * strings point into @s), *@nr set.  0, or -EINVAL (empty), -ENOMEM.
 */
int cli__split_list(char *s, const char ***out, size_t *nr);

/*
 * What every run sets up before anything else: the hash tables' secret
 * key (base/hash.h), before any table holds a name from a file.
 */
void cli__start(void);

/*
 * --debuginfod[=URLS] and --no-debuginfod, perf's options, for every
 * command that names frames from files: the entries of a getopt table,
 * their --help lines, and what they do (cli__debuginfod).
 */
/* Below 256, where the commands number their own long options, and no ASCII letter. */
#define CLI_OPT_DEBUGINFOD	0x80
#define CLI_OPT_NO_DEBUGINFOD	0x81
#define CLI_DEBUGINFOD_OPTIONS \
	{ "debuginfod", optional_argument, NULL, CLI_OPT_DEBUGINFOD }, \
	{ "no-debuginfod", no_argument, NULL, CLI_OPT_NO_DEBUGINFOD }
#define CLI_DEBUGINFOD_HELP \
"      --debuginfod[=URLS]   fetch the debug files of binaries that cannot\n" \
"                            be named otherwise, by build-id, from URLS (as\n" \
"                            DEBUGINFOD_URLS, which is used when URLS is not\n" \
"                            given, and on whenever it is set)\n" \
"      --no-debuginfod       never fetch debug files, DEBUGINFOD_URLS or not\n"

/*
 * Option @c (CLI_OPT_DEBUGINFOD with @arg NULL or URLS, or
 * CLI_OPT_NO_DEBUGINFOD): set or clear DEBUGINFOD_URLS, which
 * libdebuginfod reads (symbolize/debuginfod.h), as perf does.  Call while
 * parsing, before any thread starts.  CLI_RUN, or the exit status.
 */
int cli__debuginfod(int c, const char *arg);

/* `bpfsym [record] ...`'s --help text on @out (also `bpfsym --help`). */
void cli__record_help(FILE *out);

/* `bpfsym report --help`'s and `bpfsym symbolize --help`'s text on @out. */
void cli__report_help(FILE *out);
void cli__symbolize_help(FILE *out);

/* The subcommands: argv[0] is the verb (or "bpfsym" for a bare record).  The exit status. */
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);

#endif /* BPFSYM_CLI_H */
