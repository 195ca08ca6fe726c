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
	};

	return reason < RPT_REASON_MAX && names[reason] ? names[reason] : "unknown reason";
}
