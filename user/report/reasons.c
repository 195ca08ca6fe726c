// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reasons: why a frame has no name, in words.  The reasons are part of the
 * recording (enum rpt_reason, report.h); the writer stores them, the
 * header and the formats print them.
 */
#include <stdint.h>

#include "report/report.h"

const char *rpt_reason__str(uint32_t reason)
{
	static const char *const names[RPT_REASON_MAX] = {
		[RPT_OK] = "ok",
		[RPT_NO_MAPPING] = "no mapping",
		[RPT_ANON] = "anonymous memory",
		[RPT_FILE_UNREADABLE] = "file unreadable",
		[RPT_NO_SYMBOLS] = "no symbols",
		[RPT_BUILD_ID_MISMATCH] = "build-id mismatch",
		[RPT_OUTSIDE_SYMBOL] = "outside any symbol",
		[RPT_KALLSYMS_RESTRICTED] = "kallsyms restricted",
		[RPT_FILE_NO_ANSWER] = "file did not answer",
		[RPT_INTERP_GONE] = "process gone before its code was read",
		[RPT_INTERP_UNSUPPORTED] = "interpreter not supported",
		[RPT_INTERP_INVALID] = "invalid interpreter frame",
		[RPT_INTERP_UNREADABLE] = "interpreter memory unreadable",
		[RPT_INTERP_NO_ANSWER] = "interpreter read did not answer",
	};

	return reason < RPT_REASON_MAX && names[reason] ? names[reason] : "unknown reason";
}

const char *rpt_runtime__str(uint32_t runtime)
{
	return runtime == RPT_RT_PYTHON ? "python" : NULL;
}

const char *rpt_interp__str(uint32_t i)
{
	static const char *const names[RPT_IC__NR] = {
		[RPT_IC_NAMED] = "named",
		[RPT_IC_GONE] = "process gone",
		[RPT_IC_UNSUPPORTED] = "not supported",
		[RPT_IC_INVALID] = "invalid frame",
		[RPT_IC_UNREADABLE] = "memory unreadable",
		[RPT_IC_NO_ANSWER] = "read did not answer",
		[RPT_IC_CUT_KIND] = "stacks cut: unknown frame kind",
		[RPT_IC_CUT_SHORT] = "stacks cut: frame missing its slot",
	};

	return i < RPT_IC__NR ? names[i] : NULL;
}
