/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli: what the verbs of the command line share (docs/cli.md).  A usage
 * error is one line on stderr and exit status 2.
 */
#ifndef BPFSYM_CLI_H
#define BPFSYM_CLI_H

#define EXIT_USAGE 2

/* Print "bpfsym: MESSAGE (see bpfsym --help)"; returns EXIT_USAGE. */
int cli__usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The option getopt just refused, as the user typed it. */
const char *cli__bad_option(char **argv);

/* `bpfsym symbolize ...`: argv[0] is "symbolize".  The exit status. */
int cmd_symbolize(int argc, char **argv);

#endif /* BPFSYM_CLI_H */
