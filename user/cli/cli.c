// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cli: what the subcommands' command lines share (cli.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "cli/cli.h"

static const char *cli_command;

void cli__set_command(const char *verb)
{
	cli_command = verb;
}

void cli__start(void)
{
	hash_secret_init();
}

int cli__usage_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("bpfsym: %s (see bpfsym %s%s--help)\n", msg, cli_command ? cli_command : "",
	       cli_command ? " " : "");
	return EXIT_USAGE;
}

int cli__debuginfod(int c, const char *arg)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (c == CLI_OPT_NO_DEBUGINFOD) {
		unsetenv("DEBUGINFOD_URLS");
		return CLI_RUN;
	}
	if (arg && !arg[0])
		return cli__usage_error("--debuginfod=: expected URLS (space-separated)");
	if (arg) {
		if (setenv("DEBUGINFOD_URLS", arg, 1))
			return cli__usage_error("--debuginfod: %s", strerror(errno));
	} else if (!urls || !urls[0]) {
		pr_warn("bpfsym: --debuginfod: DEBUGINFOD_URLS is not set: no server to ask "
			"(give --debuginfod=URLS)\n");
	}
	return CLI_RUN;
}

const char *cli__bad_option(char **argv)
{
	const char *arg = argv[optind - 1];

	return arg ? arg : "?";
}

int cli__parse_pid_list(const char *s, uint32_t **out, size_t *nr)
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

int cli__split_list(char *s, const char ***out, size_t *nr)
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
