// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* inputcap: the refusal counters (inputcap.h). */
#include <stddef.h>

#include "base/inputcap.h"
#include "base/util.h"

static uint64_t counts[INPUTCAP__NR];

static const struct {
	const char *what, *label;
} caps[INPUTCAP__NR] = {
	[INPUTCAP_CFI_SECTION] = { "call-frame sections over 64 MiB", "cfi_section" },
	[INPUTCAP_SYMBOLS] = { "symbol tables over the symbol or string cap", "symbols" },
	[INPUTCAP_NOTES] = { "note areas over 1 MiB", "notes" },
	[INPUTCAP_DEBUG_CRC] = { "debug files too large to check their CRC", "debug_crc" },
	[INPUTCAP_JIT] = { "perf maps or jitdumps over a cap", "jit" },
};

void inputcap__hit(enum inputcap cap)
{
	if ((unsigned int)cap < INPUTCAP__NR)
		__atomic_fetch_add(&counts[cap], 1, __ATOMIC_RELAXED);
}

uint64_t inputcap__count(enum inputcap cap)
{
	return (unsigned int)cap < INPUTCAP__NR ? __atomic_load_n(&counts[cap], __ATOMIC_RELAXED) : 0;
}

const char *inputcap__what(enum inputcap cap)
{
	return (unsigned int)cap < INPUTCAP__NR ? caps[cap].what : NULL;
}

const char *inputcap__label(enum inputcap cap)
{
	return (unsigned int)cap < INPUTCAP__NR ? caps[cap].label : NULL;
}

void inputcap__log_counts(void)
{
	enum inputcap i;

	for (i = 0; i < INPUTCAP__NR; i++)
		if (inputcap__count(i))
			pr_debug("bpfsym: input caps: %llu %s\n", (unsigned long long)inputcap__count(i),
				 inputcap__what(i));
}
