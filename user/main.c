// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfsym: `bpfsym [record] ...`, `bpfsym report ...`, `bpfsym symbolize
 * ...`, `bpfsym help [CMD]` (docs/cli.md).  Each subcommand lives in cli/.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

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
		return cli__help(argc - 1, argv + 1);
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
