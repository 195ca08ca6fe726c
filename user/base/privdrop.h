/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * privdrop: least privilege once the BPF side is loaded and attached.
 *
 * The rest of a recording parses files other users write (ELF files,
 * perf maps, jitdumps, call-frame tables): a bug there should not run
 * with every capability of root.  What the rest still needs is kept,
 * the rest dropped from every set (bounding too), and no_new_privs set so
 * no exec can give it back.  docs/SECURITY.md lists the set and why.
 */
#ifndef BPFSYM_PRIVDROP_H
#define BPFSYM_PRIVDROP_H

#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Capabilities newer than some C libraries' linux/capability.h (Linux 5.8
 * and 5.9): their numbers are the kernel's ABI, so the header's are used
 * when it has them, these otherwise.
 */
#ifndef CAP_PERFMON
#define CAP_PERFMON		38
#endif
#ifndef CAP_BPF
#define CAP_BPF			39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

/* CAP_BPF's bit. */
#define PRIVDROP_CAP_BPF	(1ull << CAP_BPF)

/*
 * The capabilities (a mask of 1 << CAP_*) a recording keeps after
 * attaching: CAP_BPF (new table shards are BPF maps made as files are
 * mapped), CAP_SYS_PTRACE (other users' /proc/PID/maps and root),
 * CAP_DAC_READ_SEARCH (their files), CAP_CHECKPOINT_RESTORE (map_files:
 * deleted or replaced files), CAP_SYSLOG (kallsyms again as modules
 * load); with @rotating (--switch-output) also CAP_DAC_OVERRIDE: new
 * files in a directory root does not own.
 */
uint64_t privdrop__kept(bool rotating);

/*
 * What threads that open and read other users' files need: CAP_SYS_PTRACE,
 * CAP_DAC_READ_SEARCH, CAP_CHECKPOINT_RESTORE.
 */
uint64_t privdrop__kept_files(void);

/*
 * Keep only @keep (a mask of 1 << CAP_*) of what the calling thread has:
 * effective, permitted and bounding sets, inheritable and ambient
 * emptied; then set no_new_privs.  Capabilities are a thread's, not the
 * process's (capset changes the caller alone): each thread started
 * before the recording drops calls this itself at its start, with what
 * it needs (the pull endpoint's threads: nothing; the unwinder's worker:
 * CAP_BPF); threads started after inherit the caller's.  The mask kept in
 * *@kept (may be NULL).  0, or -errno (the thread goes on with what it
 * has: the caller warns).
 */
int privdrop__thread(uint64_t keep, uint64_t *kept);

/* The recorder's thread, once attached: privdrop__thread(privdrop__kept(@rotating)). */
int privdrop__apply(bool rotating, uint64_t *kept);

/*
 * The drops, by role, each a warning when it fails (the recording is
 * worth more than the drop): the recorder's thread once attached
 * (privdrop__apply, the set kept said with -v); and the thread_start
 * hooks of the threads that may start before it: the file workers
 * (privdrop__kept_files), the unwinder's worker (CAP_BPF: table shards
 * are BPF maps), the table builders (nothing: they read fds opened for
 * them).
 */
void privdrop__recorder(bool rotating);
void privdrop__file_worker(void);
void privdrop__table_worker(void);
void privdrop__builder(void);

/* "CAP_BPF,CAP_SYS_PTRACE,..." for @mask into @buf of @len bytes; @buf. */
const char *privdrop__names(uint64_t mask, char *buf, size_t len);

#endif /* BPFSYM_PRIVDROP_H */
