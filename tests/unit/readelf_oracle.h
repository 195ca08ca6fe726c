/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * readelf_oracle: what test_elfsym and test_elfsym_layout ask binutils:
 * a command's output lines, the PT_LOADs readelf -lW lists, and an
 * elfsym that must open.
 */
#ifndef BPFSYM_READELF_ORACLE_H
#define BPFSYM_READELF_ORACLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elf/elfsym.h"
#include "test.h"

/* Run a shell command and collect its output lines. */
struct lines {
	char **v;
	size_t n;
};

static __attribute__((unused)) void lines_free(struct lines *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static __attribute__((unused)) bool run_lines(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static __attribute__((unused)) bool run_lines(struct lines *l, const char *fmt, ...)
{
	char cmd[2048], *line = NULL, **tmp;
	size_t cap = 0;
	va_list ap;
	ssize_t len;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	memset(l, 0, sizeof(*l));
	p = popen(cmd, "r");
	if (!p)
		return false;
	while ((len = getline(&line, &cap, p)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[len - 1] = 0;
		tmp = realloc(l->v, (l->n + 1) * sizeof(*tmp));
		if (!tmp)
			break;
		l->v = tmp;
		l->v[l->n++] = strdup(line);
	}
	free(line);
	return pclose(p) == 0;
}

static __attribute__((unused)) void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	while (s[i] == ' ')
		i++;
	memmove(s, s + i, n - i + 1);
}

static __attribute__((unused)) struct elfsym *open_ok(const char *path)
{
	struct elfsym *es = elfsym__open(path, NULL);

	ASSERT_OK_PTR(es, path);
	return es;
}

/* ---- PT_LOADs against readelf -lW ---- */

struct oload {
	uint64_t off, vaddr, filesz;
	bool exec;
};

static __attribute__((unused)) size_t read_loads(const char *path, struct oload *v, size_t max)
{
	unsigned long long off, vaddr, paddr, filesz, memsz;
	struct lines l;
	size_t i, n = 0;
	int end;

	run_lines(&l, "readelf -lW '%s'", path);
	for (i = 0; i < l.n && n < max; i++) {
		if (sscanf(l.v[i], " LOAD %llx %llx %llx %llx %llx %n",
			   &off, &vaddr, &paddr, &filesz, &memsz, &end) < 5)
			continue;
		v[n].off = off;
		v[n].vaddr = vaddr;
		v[n].filesz = filesz;
		v[n].exec = strchr(l.v[i] + end, 'E') != NULL;
		n++;
	}
	lines_free(&l);
	return n;
}

/* The first PT_LOAD holding @x in its file (by_off) or address range. */
static __attribute__((unused)) const struct oload *load_of(const struct oload *v, size_t n, uint64_t x, bool by_off)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t base = by_off ? v[i].off : v[i].vaddr;

		if (x >= base && x - base < v[i].filesz)
			return &v[i];
	}
	return NULL;
}

#endif /* BPFSYM_READELF_ORACLE_H */
