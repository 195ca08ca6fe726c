/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inputcap: how often a cap on a size read from a file refused something.
 *
 * Every size a file declares (a section, a symbol table, a note area, a
 * perf map) is checked against a cap before it is read: the files are
 * other users' (docs/SECURITY.md).  A refusal is not an error the
 * recording can show where it happens (it names frames, builds tables on
 * other threads), so each is counted here, once per refusal, and the
 * counts go into the recording's END record, the -v summary and /metrics.
 * The counters are process-wide and atomic: the parsers that hit them
 * run on the recorder's thread and on the unwinder's and loaders' workers.
 */
#ifndef BPFSYM_INPUTCAP_H
#define BPFSYM_INPUTCAP_H

#include <stdint.h>

/* The order is the recording's (docs/FORMAT.md, END): append only. */
enum inputcap {
	INPUTCAP_CFI_SECTION,	/* .eh_frame/.debug_frame (or the PT_GNU_EH_FRAME chunk) over CFI_MAX_SECTION */
	INPUTCAP_SYMBOLS,	/* a symbol table over elfsym's symbol or string cap */
	INPUTCAP_NOTES,		/* a note area over its cap (build-ids) */
	INPUTCAP_DEBUG_CRC,	/* a debug file too large to check its .gnu_debuglink CRC */
	INPUTCAP_JIT,		/* a perf map or jitdump over its byte, line or name cap */
	INPUTCAP__NR
};

/* Count one refusal by @cap. */
void inputcap__hit(enum inputcap cap);

/* Refusals by @cap since the process started (0 for an unknown @cap). */
uint64_t inputcap__count(enum inputcap cap);

/* What @cap refused, for people ("call-frame sections over 64 MiB"), or NULL. */
const char *inputcap__what(enum inputcap cap);

/* Each cap that refused something, a -v line each. */
void inputcap__log_counts(void);

/* @cap's label in /metrics ("cfi_section"), or NULL. */
const char *inputcap__label(enum inputcap cap);

#endif /* BPFSYM_INPUTCAP_H */
