// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfsym: `bpfsym [record] ...`, `bpfsym report ...`, `bpfsym symbolize
 * ...`, `bpfsym help [CMD]` (docs/cli.md).  Each subcommand lives in cli/.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
	const char *verb;
	void (*help)(FILE *out);
	const char *what;
} commands[] = {
	{ "record", cli__record_help, "sample the CPU's stacks into a recording (the default command)" },
	{ "report", cli__report_help, "print a recording: a table, folded stacks, a flame graph, pprof" },
	{ "symbolize", cli__symbolize_help, "name addresses as a recording would (an addr2line)" },
};

/*
 * `bpfsym help [CMD]`: @argv[0] is "help".  CMD's own help on stdout, or
 * without CMD the list of commands.  The exit status (2: no such CMD).
 * Here, above the subcommands: cli.c is below them.
 */
static int help(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		printf("Usage: bpfsym [record] [OPTIONS] [-- COMMAND [ARGS...]]\n"
		       "       bpfsym COMMAND [OPTIONS]\n\nCommands:\n");
		for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			printf("  %-10s %s\n", commands[i].verb, commands[i].what);
		printf("  %-10s %s\n\nbpfsym help COMMAND (or bpfsym COMMAND --help) lists its options;\n"
		       "man bpfsym-COMMAND describes it.\n", "help", "this list, or a command's help");
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].verb)) {
			commands[i].help(stdout);
			return 0;
		}
	cli__set_command(NULL);
	return cli__usage_error("help '%s': no such command (record, report or symbolize)", argv[1]);
}

int main(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : NULL;

	cli__start();
	/* `bpfsym --help` is the bare command's: the bare command records. */
	if (verb && (!strcmp(verb, "-h") || !strcmp(verb, "--help"))) {
		cli__record_help(stdout);
		return 0;
	}
	if (verb && !strcmp(verb, "help"))
		return help(argc - 1, argv + 1);
	if (verb && (!strcmp(verb, "report") || !strcmp(verb, "symbolize") || !strcmp(verb, "record")))
		cli__set_command(verb);
	if (verb && !strcmp(verb, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (verb && !strcmp(verb, "symbolize"))
		return cmd_symbolize(argc - 1, argv + 1);
	if (verb && !strcmp(verb, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (verb && verb[0] != '-')
		return cli__usage_error("unknown command '%s': expected record, report, symbolize or help", verb);
	return cmd_record(argc, argv);
}
