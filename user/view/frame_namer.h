/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * frame_namer: the name a report view shows for a frame.  Without a namer,
 * the one the recorder resolved.  With one, kernel frames are resolved
 * again from another kallsyms text (a later boot's, or a saved copy),
 * relocated by the difference of the two _text addresses: KASLR moves the
 * kernel image by one offset, which the recording's header keeps; and
 * user frames from the files under a --symfs directory (symfs.h).
 * No libbpf here.
 */
#ifndef BPFSYM_FRAME_NAMER_H
#define BPFSYM_FRAME_NAMER_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/kernel/kallsyms.h"
#include "report/report.h"
#include "symbolize/symfs.h"

struct frame_namer;

/* What a view prints for one frame; the pointers live as long as the report and namer. */
struct frame_name {
	const char *sym;		/* NULL: unnamed (see reason) */
	uint64_t sym_off;		/* of the looked-up address into sym */
	const struct rpt_module *module;	/* NULL: no known module */
	uint64_t offset;		/* user: file offset; kernel: address (relocated) */
	uint32_t reason;		/* enum rpt_reason; RPT_OK when sym is set */
};

/*
 * A namer resolving the kernel frames of @r from @ks, at address + (@ks's
 * _text - @r's recorded _text).  @ks is borrowed: it must outlive the
 * namer.  @source names @ks in the report header ("/tmp/kallsyms.old";
 * copied).  @ks NULL: kernel frames as recorded (a namer for a symfs
 * alone); @source is then ignored.  Returns NULL with errno set and one
 * line in @err (@errlen bytes): EINVAL when @r has no _text address
 * (recorded without kernel symbols), EPERM when every address of @ks is 0
 * (saved under kptr_restrict), ENOENT when @ks has no _text, ENOMEM.
 */
struct frame_namer *frame_namer__new(const struct report *r, const struct ksyms *ks,
				     const char *source, char *err, size_t errlen);

/* frame_namer__free(NULL) is a no-op. */
void frame_namer__free(struct frame_namer *n);

/*
 * Name the user frames from @fs (opened for the same report), which is
 * borrowed: it must outlive the namer.  NULL: as recorded again.
 */
void frame_namer__set_symfs(struct frame_namer *n, struct symfs *fs);

/* The symfs given to frame_namer__set_symfs(), or NULL. */
const struct symfs *frame_namer__symfs(const struct frame_namer *n);

/*
 * Fill @out with the name of frame @f of @r.  @n NULL: as recorded.  With
 * a namer, a kernel frame is looked up at its address (rpt_frame.offset,
 * the address the recorder looked up: a caller's return address - 1) +
 * delta; a miss is unnamed with RPT_NO_MAPPING, never the stale recorded
 * name.  Its module is then "[kernel.kallsyms]" or "[MODULE]" as @ks says.
 * A frame recorded in one kernel module (vmlinux counts as one) that lands
 * in another is a miss too: modules do not move with _text.  Without @ks
 * kernel frames are as recorded.  User frames are as recorded, or as the
 * namer's symfs names them when it decides (symfs__name()).
 */
void frame_namer__name(const struct frame_namer *n, const struct report *r,
		       const struct rpt_frame *f, struct frame_name *out);

/* @ks's _text - the recorded _text (mod 2^64): what is added to kernel addresses. */
uint64_t frame_namer__delta(const struct frame_namer *n);

/* The @source given to frame_namer__new(); NULL when it has no kallsyms. */
const char *frame_namer__source(const struct frame_namer *n);

#endif /* BPFSYM_FRAME_NAMER_H */
