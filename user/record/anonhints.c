// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* anonhints: the --map-anon hints of a recording, from the command line to the model. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/procmap.h"
#include "record/anonhints.h"
#include "symbolize/symbolizer.h"

int anonhints__load(const struct record_opts *o, struct symbolizer *sym, uint32_t **ids)
{
	const struct anon_hint *h;
	char *path;
	size_t i;
	int err;

	*ids = calloc(o->nr_hints + 1, sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (i = 0; i < o->nr_hints; i++) {
		h = &o->hints[i];
		path = strndup(h->file, h->file_len);
		if (!path)
			return -ENOMEM;
		err = symbolizer__add_hint_file(sym, path, &(*ids)[i]);
		if (err)
			pr_err("bpfsym: --map-anon: '%s': %s\n", path,
				err == -ENOEXEC ? "not a regular, non-empty ELF file" : strerror(-err));
		free(path);
		if (err)
			return err;
	}
	return 0;
}

int anonhints__attach(const struct record_opts *o, struct proc_table *procs, const uint32_t *ids)
{
	const struct anon_hint *h;
	struct proc_hint ph;
	struct proc *p;
	size_t i;
	int err;

	for (i = 0; i < o->nr_hints; i++) {
		h = &o->hints[i];
		p = proc_table__find_pid(procs, h->pid);
		if (!p) {
			pr_err("bpfsym: --map-anon: process %u is not among the processes "
				"recorded (give it with -p, or record the whole system)\n", h->pid);
			return -ESRCH;
		}
		ph.start = h->start;
		ph.end = h->start + h->len;
		ph.file_off = h->offset;
		ph.id = ids[i];
		err = proc__add_hint(p, &ph);
		if (err) {
			pr_err("bpfsym: --map-anon: process %u: %s\n", h->pid,
				err == -E2BIG ? "too many hints for one process" : strerror(-err));
			return err;
		}
	}
	return 0;
}
