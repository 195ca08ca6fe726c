/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report: the bpfsym.data file, writer and reader.  The layout is
 * documented in docs/FORMAT.md.  Records are deduplicated by the writer
 * (modules, frames, stacks, strings), so a sample costs a few bytes.
 * No libbpf here.
 */
#ifndef BPFSYM_REPORT_H
#define BPFSYM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPT_NONE UINT32_MAX	/* "no module" in struct rpt_frame.module */
#define RPT_BUILD_ID_MAX 64

/* Why a frame has no name.  Kept as data: reports summarize them. */
enum rpt_reason {
	RPT_OK = 0,
	RPT_NO_MAPPING = 1,		/* address in no known mapping */
	RPT_ANON = 2,			/* anonymous executable memory, no perf map/hint */
	RPT_FILE_UNREADABLE = 3,	/* the mapped file could not be opened or parsed */
	RPT_NO_SYMBOLS = 4,		/* the file has no function symbols */
	RPT_BUILD_ID_MISMATCH = 5,	/* the file found is not the one that was mapped */
	RPT_OUTSIDE_SYMBOL = 6,		/* symbols exist, none covers the address */
	RPT_KALLSYMS_RESTRICTED = 7,	/* kernel addresses hidden (kptr_restrict) */
	RPT_FILE_NO_ANSWER = 8,		/* the file did not answer in time (a hung file system) */
	/* Interpreter frames (RPT_FRAME_INTERP, issue 27): runtime/runtime.h's misses. */
	RPT_INTERP_GONE = 9,		/* the process exited before its code objects were read */
	RPT_INTERP_UNSUPPORTED = 10,	/* interpreter version (or the runtime) not supported */
	RPT_INTERP_INVALID = 11,	/* the frame failed validation (not that code object) */
	RPT_INTERP_UNREADABLE = 12,	/* the process's memory could not be read there */
	RPT_INTERP_NO_ANSWER = 13,	/* the memory read did not answer in time */
	RPT_REASON_MAX,
};

enum rpt_module_kind {
	RPT_MOD_KERNEL = 0,	/* vmlinux or a kernel module: path "[kernel.kallsyms]" / "[name]" */
	RPT_MOD_FILE = 1,	/* a mapped file */
	RPT_MOD_ANON = 2,	/* anonymous memory */
	RPT_MOD_SPECIAL = 3,	/* [vdso] and friends */
	/*
	 * An interpreter's source file (issue 27): path as the interpreter
	 * names it (Python's co_filename), no build-id, dev/ino 0; runtime
	 * says whose.
	 */
	RPT_MOD_SOURCE = 4,
};

/*
 * rpt_module.runtime: which runtime a RPT_MOD_SOURCE module's frames are
 * of.  The values are include/bpfsym.h's frame kinds (bpfsym_frame_kind).
 */
enum rpt_runtime {
	RPT_RT_NONE = 0,	/* not a runtime's (every other module kind) */
	RPT_RT_PYTHON = 1,
	RPT_RT_MAX = 16,
};

enum rpt_frame_kind {
	RPT_FRAME_KERNEL = 0,
	RPT_FRAME_USER = 1,
	/*
	 * An interpreter's frame (issue 27): module a RPT_MOD_SOURCE (or
	 * RPT_NONE when unnamed), offset the line (0: unknown), sym the
	 * qualified name, addr the code object's address as first sampled.
	 */
	RPT_FRAME_INTERP = 2,
};

struct rpt_module {
	uint32_t kind;				/* enum rpt_module_kind */
	const char *path;			/* as the process saw it */
	uint8_t build_id[RPT_BUILD_ID_MAX];
	uint32_t build_id_len;			/* 0: none */
	uint64_t dev, ino;			/* the fallback identity */
	uint32_t runtime;			/* enum rpt_runtime: RPT_MOD_SOURCE's, else 0 */
};

struct rpt_frame {
	uint32_t kind;		/* enum rpt_frame_kind */
	uint32_t module;	/* module id, or RPT_NONE */
	uint64_t offset;	/* user: offset in the module's file; kernel: address; interp: line */
	uint64_t addr;		/* runtime address, as first sampled */
	const char *sym;	/* NULL: unnamed (see reason) */
	uint64_t sym_off;	/* offset of the address into sym */
	uint32_t reason;	/* enum rpt_reason; RPT_OK when sym is set */
};

/* 40 bytes, no padding: a reader holds one per sample of the file. */
struct rpt_sample {
	uint64_t time;		/* ns since rpt_header.start_mono_ns */
	uint64_t cgroup;
	const char *comm;
	uint32_t pid, tid, cpu;
	uint32_t stack;		/* stack id */
};

/* rpt_header.call_graph: how user stacks were walked. */
#define RPT_CG_UNKNOWN	0	/* older files; or the kernel's frame-pointer walk */
#define RPT_CG_FP	1	/* --call-graph fp */
#define RPT_CG_DWARF	2	/* --call-graph dwarf: call-frame tables */
#define RPT_UEND_MAX	16	/* room for enum bpfsym_uend */
#define RPT_CAPPED_MAX	16	/* room for enum inputcap (base/inputcap.h) */
#define RPT_DINFOD_MAX	8	/* room for enum dinfod_count (symbolize/debuginfod.h) */
#define RPT_INTERP_MAX	16	/* room for enum rpt_interp */

/*
 * rpt_header.interp: interpreter frames by what came of them, and user
 * sides cut short by a frame ingest could not decode (issue 27).  Frame
 * counts are per sample written: a frame in 10 samples counts 10.
 */
enum rpt_interp {
	RPT_IC_NAMED = 0,		/* frames named */
	RPT_IC_GONE = 1,		/* frames unnamed: reason RPT_INTERP_GONE ... */
	RPT_IC_UNSUPPORTED = 2,
	RPT_IC_INVALID = 3,
	RPT_IC_UNREADABLE = 4,
	RPT_IC_NO_ANSWER = 5,
	RPT_IC_CUT_KIND = 6,		/* user sides cut at a frame of a kind not known */
	RPT_IC_CUT_SHORT = 7,		/* user sides cut at an interpreter frame missing its slot */
	RPT_IC__NR,
};

/*
 * Off-CPU time (issue 28): the state a task left the CPU in, as the
 * sched_switch tracepoint saw it (rpt_offcpu.state; bit 1 << state in
 * rpt_header.off_cpu_states).
 */
enum rpt_offstate {
	RPT_OS_SLEEP = 0,	/* S: TASK_INTERRUPTIBLE: waiting for an event (a pipe, a futex, a timer) */
	RPT_OS_DISK = 1,	/* D: TASK_UNINTERRUPTIBLE: waiting in the kernel, typically for I/O */
	RPT_OS_PREEMPT = 2,	/* R: still runnable: preempted (or yielded), waiting for a CPU */
	RPT_OS_OTHER = 3,	/* stopped, traced, parked, dead ... */
	RPT_OS__NR,
};
#define RPT_OS_ALL	((1u << RPT_OS__NR) - 1)

/*
 * rpt_header.offcpu: what came of off-CPU intervals, since the END before
 * (like capped), but RPT_OC_RECORDS, the file's own count of OFFCPU
 * records, which the reader checks as it checks samples.
 */
enum rpt_offcpu_count {
	RPT_OC_RECORDS = 0,	/* OFFCPU records written */
	RPT_OC_NS = 1,		/* the off-CPU ns they hold */
	RPT_OC_SHORT = 2,	/* intervals under the minimum (--off-cpu-thresh): dropped */
	RPT_OC_SHORT_NS = 3,	/* ... their ns */
	RPT_OC_LOST = 4,	/* intervals kept in BPF whose stack never reached the recorder (ring buffer or map full) */
	RPT_OC_LOST_NS = 5,	/* ... their ns */
	/*
	 * intervals written under a user stack cut short: its walk ended
	 * before the root (a file's table not built yet, a read fault ...;
	 * a new program's first waits), so the waiting function may be
	 * missing from it
	 */
	RPT_OC_CUT = 6,
	RPT_OC_CUT_NS = 7,	/* ... their ns */
	RPT_OC__NR,
};
#define RPT_OFFCPU_MAX	16	/* room for enum rpt_offcpu_count */

/*
 * Time thread tid spent off the CPU in @state with @stack (its stacks at
 * the switch-out, kernel and user), summed in BPF over the intervals that
 * ended since the previous record of the same key: ns in all, count of
 * intervals.  time is when the sum was taken (ns since start_mono_ns).
 */
struct rpt_offcpu {
	uint64_t time;
	uint64_t cgroup;
	const char *comm;
	uint32_t pid, tid;
	uint32_t stack;		/* stack id */
	uint32_t state;		/* enum rpt_offstate */
	uint64_t ns;		/* time off the CPU, > 0 */
	uint64_t count;		/* intervals summed, >= 1 */
};

/* rpt_header.flags */
#define RPT_HF_USER_ONLY	(1u << 0)
#define RPT_HF_KERNEL_ONLY	(1u << 1)

struct rpt_header {
	char hostname[65];
	char release[65];		/* uname -r */
	char boot_id[40];		/* /proc/sys/kernel/random/boot_id */
	char event[32];			/* "cpu-clock" or "cycles" */
	char target[256];		/* "all", "pid 12,13", "command: make -j4" ... */
	uint64_t text_addr;		/* runtime address of _text (0: unknown) */
	uint32_t freq;			/* samples per second per CPU */
	uint32_t flags;			/* RPT_HF_* */
	uint32_t nr_cpus;
	uint64_t start_wall_ns;		/* CLOCK_REALTIME at start */
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC at start (sample time base) */
	char kfeatures[128];		/* the kernel's optional BPF features and the variant
					 * they chose ("" in files from before issue 24) */
	/* Off-CPU (issue 28; HEADER fields, 0 in older files and when not recorded). */
	uint32_t off_cpu;		/* 1: off-CPU time was recorded (--off-cpu) */
	uint32_t off_cpu_states;	/* states kept: 1 << enum rpt_offstate */
	uint64_t off_cpu_min_ns;	/* intervals shorter were dropped (RPT_OC_SHORT) */
	/* Known at the end; written in the END record. */
	uint64_t end_wall_ns;
	uint64_t samples;		/* samples written */
	uint64_t lost_samples;		/* dropped: ring buffer full */
	uint64_t lost_events;		/* mapping/process events dropped */
	uint64_t nr_procs;		/* processes seen */
	/* END fields added later: 0 when the file predates them. */
	uint64_t idle;			/* ticks of idle CPUs, not recorded */
	uint64_t lost_children;		/* children not followed: the target map was full */
	uint64_t missed_vma_busy;	/* mapping events missed: the VMA was not readable (mmap lock busy) */
	uint64_t missed_syscalls;	/* mapping events missed: a syscall's arguments were not kept */
	uint64_t bad_records;		/* malformed ring-buffer records skipped */
	/* The user-stack walk (issue 14): 0 everywhere in files from before it. */
	uint32_t call_graph;		/* RPT_CG_* */
	uint64_t uend[RPT_UEND_MAX];	/* samples by why their user stack ended (enum bpfsym_uend) */
	struct rpt_unwind {
		uint64_t tables, ready, none, failed;	/* files given a table; built; no CFI; unreadable */
		uint64_t rows, bytes;			/* rows published; BPF map memory they take */
		uint64_t build_ns, max_build_ns;	/* CPU time building tables; the longest file */
		uint64_t over_mem, over_rows, over_tables, over_procs, over_ranges;	/* caps hit */
		uint64_t pending;			/* builds not finished when recording ended */
	} unw;
	/*
	 * Rotation (issue 15): samples taken while no file could be written
	 * (a full disk), since the file before this one; 0 in older files.
	 */
	uint64_t unwritten;
	/*
	 * Sizes declared by input files that a cap refused, by cap (enum
	 * inputcap; issue 25): counts like uend; 0 in older files.
	 */
	uint64_t capped[RPT_CAPPED_MAX];
	/*
	 * debuginfod lookups (enum dinfod_count: asked, found, missed, timed
	 * out; issue 26): counts like capped; 0 in older files.
	 */
	uint64_t dinfod[RPT_DINFOD_MAX];
	/* Interpreter frames (enum rpt_interp; issue 27): counts like capped; 0 in older files. */
	uint64_t interp[RPT_INTERP_MAX];
	/* Off-CPU intervals (enum rpt_offcpu_count; issue 28): 0 in older files. */
	uint64_t offcpu[RPT_OFFCPU_MAX];
	bool complete;			/* an END record was read */
};

struct report_writer;

/*
 * The writer's dedupe index (report_windex.h) forgets past RPT_INDEX_MAX
 * bytes, and, once past RPT_INDEX_MAX / 16, every RPT_INDEX_AGE_NS of
 * sample time: what a file's recorder may hold to write each frame and
 * stack once, and how soon what churn brings is let go.
 */
#define RPT_INDEX_MAX		((size_t)8 << 20)
#define RPT_INDEX_AGE_NS	(60ULL * 1000000000ULL)

/*
 * Write the file header and a header record from @h to @fd, which the
 * writer takes (closed by report_writer__close/abort, or now on failure).
 * Returns the writer, or NULL with errno set.
 */
struct report_writer *report_writer__fdopen(int fd, const struct rpt_header *h);

/*
 * Create (truncate) @path, 0600, following links, and report_writer__fdopen()
 * it: for paths the caller controls (a memfd's /proc/self/fd link, a test's
 * scratch file).  A name a user gives is created by base/outfile.h, which
 * never follows a link or replaces a file unasked.  NULL with errno set.
 */
struct report_writer *report_writer__open(const char *path, const struct rpt_header *h);

/*
 * Intern @m; *@id receives its id.  Deduplicated on (kind, path, dev, ino,
 * build-id): the same identity always gets the same id, so callers ask
 * again rather than keep ids of their own (a module whose build-id became
 * known since is another identity, another id).  0 or -errno.
 */
int report_writer__module(struct report_writer *w, const struct rpt_module *m, uint32_t *id);

/*
 * Intern @f; *@id receives its id.  Deduplicated on (kind, module, offset),
 * or (kind, addr) when module is RPT_NONE; the first one's names win.
 * 0 or -errno.
 */
int report_writer__frame(struct report_writer *w, const struct rpt_frame *f, uint32_t *id);

/* Intern a stack of @nr frame ids, leaf first; 0 or -errno (-EINVAL: unknown frame id). */
int report_writer__stack(struct report_writer *w, const uint32_t *frames, uint32_t nr, uint32_t *id);

/*
 * Cgroup @id is @path in the cgroup v2 hierarchy ("/a/b", as
 * /proc/PID/cgroup prints it): written as a CGROUP record the first time
 * @id is declared to this writer, so each file names the cgroups its
 * samples are in; later calls with @id are no-ops.  0 or -errno (-EINVAL:
 * id 0, or a path not absolute or over RPT_CGROUP_PATH_MAX bytes; -E2BIG:
 * the file names RPT_CGROUP_MAX cgroups already, as many as a reader takes).
 */
int report_writer__cgroup(struct report_writer *w, uint64_t id, const char *path);

/*
 * Let @w's dedupe index hold about @bytes (default RPT_INDEX_MAX) before
 * it forgets all but its working set (0: at every call), and forget so
 * every @age_ns of sample time once past @bytes / 16 (default
 * RPT_INDEX_AGE_NS).  For tests and for callers with a memory budget of
 * their own.
 */
void report_writer__set_index_max(struct report_writer *w, size_t bytes, uint64_t age_ns);

/* About the bytes @w's dedupe index holds now (0 for NULL). */
size_t report_writer__index_bytes(const struct report_writer *w);

/* Times @w's dedupe index forgot (FORGET records written). */
uint64_t report_writer__forgets(const struct report_writer *w);

/* Append a sample; 0 or -errno (-EINVAL: unknown stack id). */
int report_writer__sample(struct report_writer *w, const struct rpt_sample *s);

/*
 * Append an OFFCPU record (issue 28); 0 or -errno (-EINVAL: unknown stack
 * id, a state past RPT_OS_OTHER, ns or count 0).
 */
int report_writer__offcpu(struct report_writer *w, const struct rpt_offcpu *o);

/*
 * Compress what is pending into one block and write it.  The recorder calls
 * it at least every second, so a SIGKILL loses at most that much.  0 or -errno
 * (-ENOSPC, -EIO...: the file is then unusable and later calls fail).
 */
int report_writer__flush(struct report_writer *w);

/* Bytes written to the file so far. */
uint64_t report_writer__bytes(const struct report_writer *w);

/*
 * Samples in blocks that reached the file (a write error loses those
 * still pending), and distinct pids among all samples given so far.
 * 0 for NULL.
 */
uint64_t report_writer__samples_flushed(const struct report_writer *w);
uint64_t report_writer__nr_pids(const struct report_writer *w);

/* The header's start_mono_ns: the time base of this file's sample times.  0 for NULL. */
uint64_t report_writer__time_base(const struct report_writer *w);

/*
 * Flush, append the END record (end time and counters from @final), fsync
 * and close.  Frees @w whatever happens.  0 or -errno.  On error the file
 * has no END record, so readers see it as truncated, never as complete.
 */
int report_writer__close(struct report_writer *w, const struct rpt_header *final);

/* Free @w without writing an END record (the file reads as truncated). */
void report_writer__abort(struct report_writer *w);

struct report;

/*
 * Read a whole report.  A file without an END record (killed recorder) reads
 * up to its last intact block, with header.complete false.  Corrupt input is
 * rejected: NULL, errno EINVAL (EIO on read errors), and a message in @err
 * (@errlen bytes) naming the byte offset of the problem.
 */
struct report *report__open(const char *path, char *err, size_t errlen);

/*
 * Same from the open descriptor @fd (stdin: `bpfsym report -`), read to
 * its end under the same cap as a file; @name stands for it in messages.
 * @fd stays open.
 */
struct report *report__open_fd(int fd, const char *name, char *err, size_t errlen);

/* Same from memory (the fuzz target's entry point). */
struct report *report__open_mem(const void *data, size_t len, char *err, size_t errlen);

void report__free(struct report *r);	/* NULL is a no-op */

/* Reports report__merge takes at once; more is refused (E2BIG). */
#define REPORT_MERGE_MAX	65536

/*
 * One report from the @n reports @v (rotated files of a recording, or
 * any recordings): modules, frames and stacks interned again with new
 * ids (cgroup paths kept by their kernel ids, the first path of an id
 * winning), samples (and OFFCPU records) in file order of start time,
 * their times rebased onto the earliest start (CLOCK_MONOTONIC within one
 * boot, the wall clock across boots).  Header: the earliest file's (the
 * off-CPU settings of them all together), the latest end, counters summed,
 * the unwinder's figures (state, not counts) the largest, processes
 * counted again as distinct pids; complete only when every file is.
 * Inputs that disagree (hosts, boots, events, frequencies, kernel _text,
 * off-CPU settings)
 * put one line in @warn (@warnlen bytes; "" when they agree).  @v's
 * reports are consumed (freed) whatever happens.  The new report, or
 * NULL + errno (EINVAL: @n 0 or a NULL entry; E2BIG: past an id or
 * sample cap; ENOMEM).
 */
struct report *report__merge(struct report **v, size_t n, char *warn, size_t warnlen);

/*
 * The bytes @r holds as the reader counts them against its bound, and the
 * bound (docs/FORMAT.md, "Reader limits": from the size of the file, or
 * of a merge's files).  For tests and -v.
 */
size_t report__mem(const struct report *r);
size_t report__mem_max(const struct report *r);

/* The bytes of the file @r was read from (of a merge: of its files). */
uint64_t report__file_bytes(const struct report *r);

const struct rpt_header *report__header(const struct report *r);
size_t report__nr_samples(const struct report *r);
const struct rpt_sample *report__sample(const struct report *r, size_t i);
/* The OFFCPU records read (issue 28), in file order. */
size_t report__nr_offcpu(const struct report *r);
const struct rpt_offcpu *report__offcpu(const struct report *r, size_t i);
size_t report__nr_modules(const struct report *r);
const struct rpt_module *report__module(const struct report *r, uint32_t id);	/* NULL if out of range */
size_t report__nr_frames(const struct report *r);
const struct rpt_frame *report__frame(const struct report *r, uint32_t id);	/* NULL if out of range */
/* The frame ids of stack @id, leaf first, *@nr set; NULL if out of range. */
const uint32_t *report__stack(const struct report *r, uint32_t id, uint32_t *nr);

/* A cgroup of the recording (CGROUP record): its v2 id, as samples carry it, and its path. */
struct rpt_cgroup {
	uint64_t id;
	const char *path;	/* "/a/b" in the cgroup v2 hierarchy */
};

#define RPT_CGROUP_PATH_MAX 4096	/* bytes of a cgroup path, at most */

/* The path of cgroup @id, or NULL when the recording does not name it (older files: none). */
const char *report__cgroup_path(const struct report *r, uint64_t id);

/* The cgroups the recording names, in file order: @i < report__nr_cgroups(). */
size_t report__nr_cgroups(const struct report *r);
const struct rpt_cgroup *report__cgroup(const struct report *r, size_t i);	/* NULL if out of range */

/* "ok", "no mapping", "anonymous" ... for messages and summaries. */
const char *rpt_reason__str(uint32_t reason);

/* "python" ... (enum rpt_runtime), or NULL for RPT_RT_NONE and values not known. */
const char *rpt_runtime__str(uint32_t runtime);

/* "named", "process gone" ... (enum rpt_interp), or NULL for a value not known. */
const char *rpt_interp__str(uint32_t i);

/*
 * An off-CPU state (enum rpt_offstate) by name: "sleeping", "disk",
 * "preempted", "other" (the folded views' pseudo frames without their
 * brackets), and by letter: "S", "D", "R", "other" (the --off-cpu-state
 * list's); NULL for a value not known.
 */
const char *rpt_offstate__str(uint32_t state);
const char *rpt_offstate__letter(uint32_t state);

/*
 * Parse an --off-cpu-state list, "S,D,R,other" or "all" (any case, each
 * at most once or more), into *@mask (1 << enum rpt_offstate).  0, or
 * -EINVAL (an empty list or an unknown name) with *@mask unchanged.
 */
int rpt_offstate__parse(const char *list, uint32_t *mask);

#endif /* BPFSYM_REPORT_H */
