// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jitmap: per process, the JIT symbol files found for it and what was read
 * of them so far.  A bounded table (least recently used process dropped
 * first) with a bounded set of open files (fileid's fd_cache): a file
 * whose fd was closed is reopened, through the process, only to read what
 * it gained since.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/htab.h"
#include "base/lru.h"
#include "base/util.h"
#include "symbolize/fileid.h"
#include "symbolize/jit/jitdump.h"
#include "symbolize/jit/jitmap.h"
#include "symbolize/jit/perfmap.h"

#define MAX_PROCS_DEFAULT	1024
#define MAX_FDS_DEFAULT		64
#define REFRESH_NS_DEFAULT	100000000ull
#define RETRY_NS_DEFAULT	1000000000ull
/* A process maps one jitdump, or a few (one per JIT thread or restart). */
#define MAX_DUMPS		4

enum pm_state {
	PM_UNKNOWN = 0,		/* never looked for */
	PM_ABSENT,		/* not there (yet): look again after retry_at */
	PM_OPEN,		/* found and being read */
	PM_REFUSED,		/* not a file we read (owner, type): for good */
};

/* One JIT symbol file of a process. */
struct jitsrc {
	struct fd_slot fd;
	char *path;			/* as the process sees it */
	uint64_t dev, ino;
	struct perfmap_reader *pm;	/* one of the two */
	struct jitdump_reader *jd;
	uint64_t next_read;		/* no re-read before (monotonic ns) */
	bool stopped;			/* the reader gave up on it for good */
};

struct jitproc {
	uint32_t pid;
	uint64_t pstart;
	struct lru_node lru;
	enum pm_state pm_state;
	uint64_t retry_at;
	struct jitsrc perfmap;
	struct jitsrc dumps[MAX_DUMPS];
	size_t nr_dumps;
};

struct jitmap {
	char *proc_root;
	size_t max_procs, nr;
	uint64_t refresh_ns, retry_ns;
	struct htab procs;		/* hash of the pid -> struct jitproc * */
	struct lru lru;			/* most recently used first */
	struct fd_cache fds;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t pid_hash(uint32_t pid)
{
	return hash_u64(0, pid);
}

static bool pid_eq(const void *ctx, const void *key, uint64_t val)
{
	return ((const struct jitproc *)(uintptr_t)val)->pid == *(const uint32_t *)key;
}

/* The state of @pid, whatever its pstart (there is one at most), or NULL. */
static struct jitproc *proc_of_pid(const struct jitmap *jm, uint32_t pid)
{
	return (struct jitproc *)(uintptr_t)htab__find(&jm->procs, pid_hash(pid), pid_eq, NULL, &pid);
}

static void src_free(struct jitmap *jm, struct jitsrc *src)
{
	fd_cache__drop(&jm->fds, &src->fd);
	perfmap_reader__free(src->pm);
	jitdump_reader__free(src->jd);
	free(src->path);
	memset(src, 0, sizeof(*src));
	fd_slot__init(&src->fd);
}

static void proc_drop(struct jitmap *jm, struct jitproc *jp)
{
	size_t i;

	htab__del(&jm->procs, pid_hash(jp->pid), (uintptr_t)jp);
	lru__unlink(&jm->lru, &jp->lru);
	src_free(jm, &jp->perfmap);
	for (i = 0; i < jp->nr_dumps; i++)
		src_free(jm, &jp->dumps[i]);
	free(jp);
	jm->nr--;
}

/*
 * The state of process (@pid, @pstart), made when @create.  Another
 * process with the same pid is an older one: the pid was reused.
 */
static struct jitproc *proc_get(struct jitmap *jm, uint32_t pid, uint64_t pstart, bool create)
{
	struct jitproc *jp;
	size_t i;

	while ((jp = proc_of_pid(jm, pid))) {
		if (jp->pstart == pstart) {
			lru__touch(&jm->lru, &jp->lru);
			return jp;
		}
		proc_drop(jm, jp);
	}
	if (!create || htab__reserve(&jm->procs, 1))
		return NULL;
	if (jm->nr >= jm->max_procs && jm->lru.tail)
		proc_drop(jm, lru_entry(jm->lru.tail, struct jitproc, lru));
	jp = calloc(1, sizeof(*jp));
	if (!jp)
		return NULL;
	jp->pid = pid;
	jp->pstart = pstart;
	fd_slot__init(&jp->perfmap.fd);
	for (i = 0; i < MAX_DUMPS; i++)
		fd_slot__init(&jp->dumps[i].fd);
	htab__add(&jm->procs, pid_hash(pid), (uintptr_t)jp);	/* reserved: cannot fail */
	lru__push_front(&jm->lru, &jp->lru);
	jm->nr++;
	return jp;
}

bool jitmap__is_jitdump_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t i = 4;

	base = base ? base + 1 : path;
	if (!base || strncmp(base, "jit-", 4) || !(base[4] >= '0' && base[4] <= '9'))
		return false;
	while (base[i] >= '0' && base[i] <= '9')
		i++;
	return !strcmp(base + i, ".dump");
}

/*
 * The pid process @pid has in its own (innermost) PID namespace: the last
 * field of NSpid in its status, what a containerized JIT names its perf
 * map after.  @pid itself when the kernel does not say.
 */
static uint32_t ns_pid(const struct jitmap *jm, uint32_t pid)
{
	char path[PATH_MAX], *buf = NULL, *line, *tok, *save = NULL;
	uint32_t last = pid, v;
	size_t len;

	snprintf(path, sizeof(path), "%s/%u/status", jm->proc_root, pid);
	if (read_file_capped(path, 64 * 1024, &buf, &len))
		return pid;
	line = strstr(buf, "\nNSpid:");
	if (line) {
		line += strlen("\nNSpid:");
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			if (!parse_u32(tok, &v) && v)
				last = v;
	}
	free(buf);
	return last;
}

/* Look for @jp's perf map, and open it when it is one we may read. */
static void perfmap_open(struct jitmap *jm, struct jitproc *jp)
{
	char path[PATH_MAX], mapname[64];
	struct stat st, pst;
	int root, fd;

	snprintf(mapname, sizeof(mapname), "/tmp/perf-%u.map", ns_pid(jm, jp->pid));
	snprintf(path, sizeof(path), "%s/%u", jm->proc_root, jp->pid);
	/* /proc/PID belongs to the process's (effective) user. */
	if (stat(path, &pst))
		goto absent;
	snprintf(path, sizeof(path), "%s/%u/root", jm->proc_root, jp->pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		goto absent;
	/* Not a regular file, or still empty (just created): look again later. */
	fd = fileid__open_in_root(root, mapname, &st);
	close(root);
	if (fd < 0)
		goto absent;
	if (st.st_uid != pst.st_uid && st.st_uid != 0) {
		pr_debug("jitmap: pid %u: '%s' belongs to uid %u, not the process's %u: not read\n",
			 jp->pid, mapname, (unsigned int)st.st_uid, (unsigned int)pst.st_uid);
		close(fd);
		jp->pm_state = PM_REFUSED;
		return;
	}
	jp->perfmap.pm = perfmap_reader__new(NULL);
	jp->perfmap.path = strdup(mapname);
	if (!jp->perfmap.pm || !jp->perfmap.path) {
		close(fd);
		src_free(jm, &jp->perfmap);
		goto absent;
	}
	jp->perfmap.dev = st.st_dev;
	jp->perfmap.ino = st.st_ino;
	fd_cache__put(&jm->fds, &jp->perfmap.fd, fd);
	jp->pm_state = PM_OPEN;
	return;
absent:
	jp->pm_state = PM_ABSENT;
	jp->retry_at = now_ns() + jm->retry_ns;
}

/*
 * @src's fd, reopened through process @pid when the cache closed it: the
 * jitdump as mapped (map_files would need its range; its path in the
 * process's root does), the perf map at its path, each only if it is
 * still the same file.  -1 when it cannot be had.
 */
static int src_fd(struct jitmap *jm, struct jitproc *jp, struct jitsrc *src)
{
	char path[PATH_MAX];
	struct stat st;
	int root, fd;

	if (src->fd.fd >= 0) {
		fd_cache__touch(&jm->fds, &src->fd);
		return src->fd.fd;
	}
	snprintf(path, sizeof(path), "%s/%u/root", jm->proc_root, jp->pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	fd = fileid__open_in_root(root, src->path, &st);
	close(root);
	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_dev != src->dev || (uint64_t)st.st_ino != src->ino) {
		close(fd);
		return -1;
	}
	fd_cache__put(&jm->fds, &src->fd, fd);
	return fd;
}

/* Read what @src gained since the last read, unless read too recently. */
static void src_refresh(struct jitmap *jm, struct jitproc *jp, struct jitsrc *src, uint64_t now)
{
	int fd, err;

	if (src->stopped || now < src->next_read)
		return;
	src->next_read = now + jm->refresh_ns;
	fd = src_fd(jm, jp, src);
	if (fd < 0)
		return;
	err = src->pm ? perfmap_reader__read(src->pm, fd) : jitdump_reader__read(src->jd, fd);
	if (err == -E2BIG || err == -EINVAL || err == -EPROTONOSUPPORT || err == -EBADMSG) {
		pr_debug("jitmap: pid %u: '%s': not read further: %s\n", jp->pid, src->path,
			 strerror(-err));
		src->stopped = true;
	}
}

static const struct jitsym *src_lookup(struct jitsrc *src, uint64_t addr)
{
	return jitsyms__lookup(src->pm ? perfmap_reader__syms(src->pm) : jitdump_reader__syms(src->jd),
			       addr);
}

/* Look @addr up in @src, reading more first if it misses. */
static const struct jitsym *src_find(struct jitmap *jm, struct jitproc *jp, struct jitsrc *src,
				     uint64_t addr, uint64_t now)
{
	const struct jitsym *sym = src_lookup(src, addr);

	if (!sym) {
		src_refresh(jm, jp, src, now);
		sym = src_lookup(src, addr);
	}
	return sym;
}

int jitmap__add_jitdump(struct jitmap *jm, uint32_t pid, uint64_t pstart, int fd, const char *path)
{
	struct jitproc *jp = proc_get(jm, pid, pstart, true);
	struct jitsrc *src;
	struct stat st;
	size_t i;

	if (!jp || fstat(fd, &st)) {
		close(fd);
		return jp ? -errno : -ENOMEM;
	}
	for (i = 0; i < jp->nr_dumps; i++) {
		if (jp->dumps[i].dev == (uint64_t)st.st_dev && jp->dumps[i].ino == (uint64_t)st.st_ino) {
			close(fd);	/* mapped again: already known */
			return 0;
		}
	}
	if (jp->nr_dumps == MAX_DUMPS) {
		pr_debug("jitmap: pid %u: more than %d jitdump files: '%s' not read\n", pid, MAX_DUMPS, path);
		close(fd);
		return -E2BIG;
	}
	src = &jp->dumps[jp->nr_dumps];
	src->jd = jitdump_reader__new(NULL);
	src->path = strdup(path);
	if (!src->jd || !src->path) {
		close(fd);
		src_free(jm, src);
		return -ENOMEM;
	}
	src->dev = st.st_dev;
	src->ino = st.st_ino;
	fd_cache__put(&jm->fds, &src->fd, fd);
	jp->nr_dumps++;
	src_refresh(jm, jp, src, now_ns());
	return 0;
}

int jitmap__lookup(struct jitmap *jm, uint32_t pid, uint64_t pstart, uint64_t addr,
		   struct jit_hit *out)
{
	const struct jitsym *sym = NULL;
	struct jitsrc *src = NULL;
	uint64_t now = now_ns();
	struct jitproc *jp;
	size_t i;

	jp = proc_get(jm, pid, pstart, true);
	if (!jp)
		return -ENOMEM;
	/* A jitdump is the richer source, and the newest one the likeliest. */
	for (i = jp->nr_dumps; i-- > 0 && !sym;) {
		src = &jp->dumps[i];
		sym = src_find(jm, jp, src, addr, now);
	}
	if (!sym) {
		if (jp->pm_state == PM_UNKNOWN || (jp->pm_state == PM_ABSENT && now >= jp->retry_at))
			perfmap_open(jm, jp);
		if (jp->pm_state == PM_OPEN) {
			src = &jp->perfmap;
			sym = src_find(jm, jp, src, addr, now);
		}
	}
	if (!sym)
		return -ENOENT;
	out->name = sym->name;
	out->start = sym->start;
	out->source = src->path;
	out->dev = src->dev;
	out->ino = src->ino;
	return 0;
}

struct jitmap *jitmap__new(const struct jitmap_opts *opts)
{
	static const struct jitmap_opts defaults;
	struct jitmap *jm;

	if (!opts)
		opts = &defaults;
	jm = calloc(1, sizeof(*jm));
	if (!jm)
		return NULL;
	jm->max_procs = opts->max_procs ? opts->max_procs : MAX_PROCS_DEFAULT;
	jm->fds.cap = opts->max_fds ? opts->max_fds : MAX_FDS_DEFAULT;
	jm->refresh_ns = opts->refresh_ns ? opts->refresh_ns : REFRESH_NS_DEFAULT;
	jm->retry_ns = opts->retry_ns ? opts->retry_ns : RETRY_NS_DEFAULT;
	jm->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	if (!jm->proc_root) {
		jitmap__free(jm);
		errno = ENOMEM;
		return NULL;
	}
	return jm;
}

void jitmap__free(struct jitmap *jm)
{
	if (!jm)
		return;
	while (jm->lru.head)
		proc_drop(jm, lru_entry(jm->lru.head, struct jitproc, lru));
	htab__free(&jm->procs);
	free(jm->proc_root);
	free(jm);
}
