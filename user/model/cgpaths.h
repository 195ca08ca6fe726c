/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cgpaths: a sample's cgroup v2 id -> the cgroup's path in the hierarchy
 * ("/system.slice/docker-ID.scope"), resolved lazily and cached.  The id
 * is the inode number of the cgroup's directory in cgroup2fs (what
 * bpf_get_current_cgroup_id() returns), so a path is confirmed by a stat
 * of MOUNT/PATH.  A miss asks the sampled process first (the "0::" line of
 * /proc/PID/cgroup, one read and one stat); when that fails (the process
 * is gone, or moved since), the hierarchy is walked for every id still
 * unknown, at most once per rescan interval of event time (the interval
 * doubling, up to 64 times, while walks find nothing); an unknown id asks
 * /proc again at most once per interval too.  The cache is
 * bounded (LRU), unknown ids included, so a machine creating cgroups for
 * weeks keeps it flat.  Not thread-safe: the recorder thread owns it.
 * No libbpf here.
 */
#ifndef BPFSYM_CGPATHS_H
#define BPFSYM_CGPATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CGPATHS_CAP		4096		/* cgroups cached, known or not, by default */
#define CGPATHS_RESCAN_NS	1000000000ull	/* between two walks of the hierarchy */
#define CGPATHS_PATH_MAX	4096		/* longer paths are not kept */
#define CGPATHS_WALK_MAX	65536		/* directories one walk visits, at most */

struct cgpaths_opts {
	const char *mount;	/* the cgroup2 mount; NULL: the first in /proc/self/mountinfo */
	const char *proc;	/* procfs; NULL: "/proc" */
	size_t cap;		/* 0: CGPATHS_CAP */
	uint64_t rescan_ns;	/* 0: CGPATHS_RESCAN_NS */
};

struct cgpaths_stats {
	uint64_t lookups;	/* calls with an id not 0 */
	uint64_t misses;	/* ids not cached as known, each time asked */
	uint64_t by_proc;	/* resolved from /proc/PID/cgroup */
	uint64_t by_walk;	/* resolved by a walk of the hierarchy */
	uint64_t walks;		/* walks made */
	uint64_t evictions;	/* entries dropped for room */
	size_t cached;		/* entries now (known and unknown) */
};

struct cgpaths;

/* Room for a mount point read from mountinfo (longer ones are cut there). */
#define CGPATHS_MOUNT_MAX	4096

/*
 * The next cgroup2 file system mounted at its root in mountinfo text
 * @buf (NUL-terminated), which is cut into lines in place (strtok_r):
 * the first call with *@save NULL, the next ones with the same @buf and
 * @save.  True with its mount point in @mp (as mountinfo writes it:
 * octal escapes are kept); false after the last.  Pure: the parser
 * cgpaths and `-G` (record/cgroup.c) share, fuzzed by fuzz_cgroup.
 */
bool cgpaths__next_cgroup2(char *buf, char **save, char mp[CGPATHS_MOUNT_MAX]);

/*
 * The cgroup v2 path in the text of a /proc/PID/cgroup file @text
 * (NUL-terminated): what follows "0::" on the first line starting so,
 * up to its line feed or the end; not NUL-terminated.  0 with its start
 * (inside @text) in *@path and its length in *@len, or -ENOENT when no
 * line starts with "0::" (a cgroup v1-only process).  Pure, as above.
 */
int cgpaths__proc_v2(const char *text, const char **path, size_t *len);

/*
 * A resolver over @o (NULL: the defaults).  NULL + errno: ENOENT when no
 * cgroup2 file system is mounted (a v1-only machine: every lookup would
 * miss), ENOMEM.
 */
struct cgpaths *cgpaths__new(const struct cgpaths_opts *o);

/* NULL is a no-op. */
void cgpaths__free(struct cgpaths *c);

/*
 * The path of cgroup @id, sampled in process @pid at event time @now_ns,
 * or NULL when it is not known (yet): id 0, a cgroup removed before it
 * could be looked at, or one the rate limit has not let a walk find yet.
 * The string lives until a later call (eviction may free it).
 */
const char *cgpaths__lookup(struct cgpaths *c, uint64_t id, uint32_t pid, uint64_t now_ns);

/* The counters, updated in place by later calls. */
const struct cgpaths_stats *cgpaths__stats(const struct cgpaths *c);

#endif /* BPFSYM_CGPATHS_H */
