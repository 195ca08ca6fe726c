/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python: the Python runtime behind runtime/runtime.h's interface, the
 * adapter over pyrt.h: frames of kind BPFSYM_FK_PYTHON named from the
 * process's code objects, misses with runtime.h's reasons.
 */
#ifndef BPFSYM_PYTHON_H
#define BPFSYM_PYTHON_H

#include "runtime/python/pyrt.h"

struct runtimes;

/*
 * Make a Python runtime state (pyrt__new(@o)) and register it in @rs for
 * BPFSYM_FK_PYTHON; the registry owns it (freed with @rs), *@rt is it,
 * for the code that finds interpreters at mapping time
 * (pyrt__set_interp).  0; -EEXIST, -EINVAL (runtimes__add), -ENOMEM;
 * -EOPNOTSUPP in a tree without runtime/runtime.h.
 */
int python_runtime__register(struct runtimes *rs, const struct pyrt_opts *o, struct pyrt **rt);

#endif /* BPFSYM_PYTHON_H */
