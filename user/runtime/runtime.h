/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * runtime: names the frames of an interpreter or a JIT runtime (issue 27).
 * BPF writes such a frame into a sample's user side as slots of its frame
 * kind (include/bpfsym.h, BPFSYM_FK_*); ingest hands them here, and the
 * runtime registered for that kind names them from the process's memory
 * (a Python code object's qualified name, file and line).
 *
 * A runtime is a folder, user/runtime/NAME/, behind struct runtime_ops:
 * its BPF walker is bpf/NAME.bpf.h, its frame kind is in include/bpfsym.h.
 * The registry (struct runtimes) holds at most one runtime per frame kind;
 * a frame of a kind nobody registered is a miss (RT_MISS_VERSION: "not
 * supported"), never an error.
 *
 * The rule every runtime keeps: naming runs on the recorder's thread, the
 * one that drains the ring buffer, so it never blocks.  Reading process
 * memory is a job on the offload pool (base/offload.h): a hostile process
 * can point BPF at memory backed by a hung FUSE file, and a read of it
 * would not return.  A runtime answers from its cache, or queues the read
 * and says -EAGAIN; ingest then keeps the sample (ingest/defer.c, as it
 * does for files that have not answered) and asks again after each
 * batch, and at the end.  A read that does not end within the runtime's
 * own deadline is a miss, RT_MISS_NO_ANSWER, not another -EAGAIN.
 *
 * user/runtime/ may include base/, model/, report/ and symbolize/elf/;
 * ingest/ and record/ may include it (scripts/check-layout.sh).
 */
#ifndef BPFSYM_RUNTIME_H
#define BPFSYM_RUNTIME_H

#include <stdint.h>

#include "model/procmap.h"

/* Why a runtime frame has no name (struct rt_name.reason when func is NULL). */
enum rt_miss {
	RT_MISS_NONE = 0,	/* named */
	RT_MISS_GONE = 1,	/* the process exited before its code objects were read */
	/*
	 * Interpreter version not supported; also a frame kind no runtime
	 * is registered for (bpfsym built or run without it).
	 */
	RT_MISS_VERSION = 2,
	/* The frame failed validation: not a code object, firstlineno differs ... */
	RT_MISS_INVALID = 3,
	RT_MISS_READ = 4,	/* the process's memory could not be read there */
	RT_MISS_NO_ANSWER = 5,	/* the read did not answer in time, or went past its cap */
	RT_MISS_MAX,
};

/*
 * A frame's name.  func and file are interned by the runtime: they stay
 * valid, and the same pointer for the same string, as long as the
 * runtime object (a sample kept by ingest holds them for a minute at
 * most, the writer copies them).  file may be NULL (unknown) when func is
 * set; line 0 is unknown.  reason: RT_MISS_NONE when func is set, else
 * why not.  Recorded as a frame (report.h, RPT_FRAME_INTERP): func its
 * symbol, file its module, line its offset, line - first_line its sym_off.
 */
struct rt_name {
	const char *func;	/* qualified name ("Outer.method", "<module>") */
	const char *file;	/* the source file as the interpreter names it (co_filename) */
	uint32_t line;		/* of the instruction sampled */
	uint32_t first_line;	/* the function's (co_firstlineno); 0: unknown */
	uint32_t reason;	/* enum rt_miss */
};

/* A runtime frame as BPF sampled it (include/bpfsym.h). */
struct rt_frame {
	uint32_t pid;		/* thread group id */
	uint64_t pstart;	/* its start time: (pid, pstart) is one process */
	uint64_t slot0;		/* kind in bits 60..63, the code address in bits 0..47 */
	uint64_t slot1;		/* the kind's second slot (Python: firstlineno << 32 | instruction) */
};

/*
 * What a runtime does, for the registry.  Every call is on the thread
 * that feeds ingest; none may block (above).
 */
struct runtime_ops {
	/* Its name in recordings and messages ("python"); a static string. */
	const char *name;
	/* The frame kind it names (enum bpfsym_frame_kind, not BPFSYM_FK_NATIVE). */
	uint32_t frame_kind;
	/*
	 * Name frame @f; @p is the process's mapping model at the sample
	 * (NULL: the model does not know it), where the runtime finds its
	 * interpreter's mappings.  Returns 0 with *@out filled: a name, or a
	 * miss with its reason (cached or final); or -EAGAIN: a read was
	 * queued (or is still running), ask again later with the same frame.
	 * Any other return is taken as a miss, RT_MISS_READ.
	 * Names are cached by (pid, pstart, code address, slot1's
	 * validation part: Python's firstlineno): a reused address with
	 * another firstlineno is another entry, never the stale name.
	 */
	int (*name_frame)(void *ctx, const struct rt_frame *f, const struct proc *p, struct rt_name *out);
	/*
	 * Process (@pid, @pstart) has left the model (its exit, after the
	 * grace its late samples get): drop what is cached for it.  May be NULL.
	 */
	void (*proc_gone)(void *ctx, uint32_t pid, uint64_t pstart);
	/*
	 * Mapping time: where a runtime finds its interpreter in a process
	 * and tells its BPF walker (through whatever its constructor was
	 * given: record/ owns the maps).  Each may be NULL.
	 * mapped: process @p gained mapping @m (both in the model now; also
	 * every mapping of a process the model loaded from /proc).
	 * forked: child (@pid, @pstart) of (@ppid, @ppstart), which runs its
	 * parent's image until it execs.
	 * execed: (@pid, @pstart) exec'd: the old image's interpreter is gone.
	 * poll: after each batch (@wait_ns 0), and at start-up with a wait
	 * for the processes already running: take the work that ended.
	 */
	void (*mapped)(void *ctx, const struct proc *p, const struct mapping *m);
	void (*forked)(void *ctx, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart);
	void (*execed)(void *ctx, uint32_t pid, uint64_t pstart);
	void (*poll)(void *ctx, uint64_t wait_ns);
	/* Free @ctx: the registry is freed.  May be NULL (the caller owns ctx). */
	void (*free)(void *ctx);
};

struct runtimes;

/* An empty registry: every runtime frame is a miss, RT_MISS_VERSION.  NULL + errno. */
struct runtimes *runtimes__new(void);

/* Free @rs and each runtime whose ops have a free().  NULL is a no-op. */
void runtimes__free(struct runtimes *rs);

/*
 * Register @ops (static, outlives @rs) with @ctx for ops->frame_kind.
 * 0, -EINVAL (no name or name_frame(), or a kind not in 1..BPFSYM_FK_MAX-1), -EEXIST (a
 * runtime has that kind already).  On error @ctx stays the caller's.
 */
int runtimes__add(struct runtimes *rs, const struct runtime_ops *ops, void *ctx);

/*
 * Name frame @f of kind @kind (bpfsym_fk_kind of its slot0) through the
 * runtime registered for it; with none (or @rs NULL), 0 and a miss with
 * RT_MISS_VERSION.  Returns what the runtime's name_frame() returns (0 or
 * -EAGAIN), *@out always filled (on -EAGAIN: a miss, RT_MISS_NO_ANSWER,
 * for a caller that cannot wait).
 */
int runtimes__name(struct runtimes *rs, uint32_t kind, const struct rt_frame *f,
		   const struct proc *p, struct rt_name *out);

/* Process (@pid, @pstart) left the model: every runtime forgets it.  @rs NULL: a no-op. */
void runtimes__proc_gone(struct runtimes *rs, uint32_t pid, uint64_t pstart);

/* The mapping-time calls of struct runtime_ops, to every runtime that has them.  @rs NULL: no-ops. */
void runtimes__mapped(struct runtimes *rs, const struct proc *p, const struct mapping *m);
void runtimes__forked(struct runtimes *rs, uint32_t pid, uint64_t pstart, uint32_t ppid, uint64_t ppstart);
void runtimes__execed(struct runtimes *rs, uint32_t pid, uint64_t pstart);
void runtimes__poll(struct runtimes *rs, uint64_t wait_ns);

/* The name of the runtime registered for @kind ("python"), or NULL. */
const char *runtimes__kind_name(const struct runtimes *rs, uint32_t kind);

#endif /* BPFSYM_RUNTIME_H */
