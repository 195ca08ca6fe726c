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
#include "base/inputcap.h"
#include "base/lru.h"
#include "base/util.h"
#include "symbolize/fileid.h"
#include "symbolize/jit/jitdump.h"
#include "symbolize/jit/jitload.h"
#include "symbolize/jit/jitmap.h"
#include "symbolize/jit/perfmap.h"

#define MAX_PROCS_DEFAULT	1024
#define MAX_FDS_DEFAULT		64
#define REFRESH_NS_DEFAULT	100000000ull
#define RETRY_NS_DEFAULT	1000000000ull
#define WAIT_NS_DEFAULT		100000000ull
/* A process maps one jitdump, or a few (one per JIT thread or restart). */
#define MAX_DUMPS		4

enum pm_state {
	PM_UNKNOWN = 0,		/* never looked for */
	PM_ABSENT,		/* not there (yet): look again after retry_at */
	PM_OPENING,		/* its open did not answer in time: its job runs */
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
	struct jit_job *job;		/* its open or read that did not answer in time: the reader is lent */
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
	uint64_t refresh_ns, retry_ns, wait_ns;
	struct offload *pool;		/* where files are opened and read; NULL: here */
	struct htab procs;		/* hash of the pid -> struct jitproc * */
	struct lru lru;			/* most recently used first */
	struct fd_cache fds;
};

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
	/* A job still reading: the reader is the job's now, freed when its read returns. */
	if (src->job) {
		src->job->owns = true;
		offload__abandon(jm->pool, &src->job->job);
		src->pm = NULL;
		src->jd = NULL;
	}
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

/* What a read of @src's reader returned: a file that cannot be read further is left. */
static void read_result(struct jitproc *jp, struct jitsrc *src, int err)
{
	if (err == -E2BIG)
		inputcap__hit(INPUTCAP_JIT);
	if (err == -E2BIG || err == -EINVAL || err == -EPROTONOSUPPORT || err == -EBADMSG) {
		pr_debug("jitmap: pid %u: '%s': not read further: %s\n", jp->pid, src->path,
			 strerror(-err));
		src->stopped = true;
	}
}

/* Take what @j, @src's job that ended, made (the fd it opened, its read); @j freed.  Its open's error. */
static int src_adopt(struct jitmap *jm, struct jitproc *jp, struct jitsrc *src, struct jit_job *j)
{
	int err = j->open_err;

	src->job = NULL;
	if (!err && j->new_fd >= 0) {
		if (!src->dev && !src->ino) {
			src->dev = j->st.st_dev;
			src->ino = j->st.st_ino;
		}
		fd_cache__put(&jm->fds, &src->fd, j->new_fd);
		j->new_fd = -1;
	}
	if (!err && (j->pm || j->jd))
		read_result(jp, src, j->err);
	jit_job__free(j);
	return err;
}

/*
 * Open (when the cache closed its fd, or the first time) and read @src
 * in a job, waited for jm->wait_ns; or look at the job still running
 * since.  0 once it ended, its open's error in *@open_err; -EINPROGRESS
 * while it runs (the reader is lent: not looked into); or -errno (no
 * job: -ENOMEM, or every worker busy).
 */
static int src_job(struct jitmap *jm, struct jitproc *jp, struct jitsrc *src, int *open_err)
{
	struct jit_job *j = src->job;
	int err, fd = -1;

	*open_err = 0;
	if (j) {
		if (offload__wait(jm->pool, &j->job, 0))
			return -EINPROGRESS;
		*open_err = src_adopt(jm, jp, src, j);
		return 0;
	}
	if (src->fd.fd >= 0) {
		fd_cache__touch(&jm->fds, &src->fd);
		fd = fcntl(src->fd.fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	}
	j = jit_job__new(jm->proc_root, jp->pid, src->path, src->dev, src->ino, fd, src->pm, src->jd);
	if (!j)
		return -ENOMEM;
	err = offload__run(jm->pool, &j->job, jm->wait_ns);
	if (err == -ETIMEDOUT) {
		src->job = j;
		pr_debug("jitmap: pid %u: '%s': no answer in %llu ms: read when it answers\n", jp->pid,
			 src->path, (unsigned long long)(jm->wait_ns / 1000000ull));
		return -EINPROGRESS;
	}
	if (err) {
		jit_job__free(j);
		return err;
	}
	*open_err = src_adopt(jm, jp, src, j);
	return 0;
}

/*
 * Look for @jp's perf map, open it when it is one we may read and read it
 * (a job), or look at that job.
 */
static void perfmap_open(struct jitmap *jm, struct jitproc *jp)
{
	struct jitsrc *src = &jp->perfmap;
	char mapname[64];
	int err, open_err;

	if (jp->pm_state != PM_OPENING) {
		snprintf(mapname, sizeof(mapname), "/tmp/perf-%u.map", ns_pid(jm, jp->pid));
		src->pm = perfmap_reader__new(NULL);
		src->path = strdup(mapname);
		if (!src->pm || !src->path)
			goto absent;
	}
	err = src_job(jm, jp, src, &open_err);
	if (err == -EINPROGRESS) {
		jp->pm_state = PM_OPENING;
		return;
	}
	if (err)
		goto absent;
	if (open_err == -EPERM || open_err == -ELOOP) {
		src_free(jm, src);
		jp->pm_state = PM_REFUSED;
		return;
	}
	/* Not there, not a regular file, or still empty (just created): look again later. */
	if (open_err)
		goto absent;
	src->next_read = clock_ns(CLOCK_MONOTONIC_COARSE) + jm->refresh_ns;
	jp->pm_state = PM_OPEN;
	return;
absent:
	src_free(jm, src);
	jp->pm_state = PM_ABSENT;
	jp->retry_at = clock_ns(CLOCK_MONOTONIC_COARSE) + jm->retry_ns;
}

/* Read what @src gained since the last read, unless read too recently; or look at that read. */
static void src_refresh(struct jitmap *jm, struct jitproc *jp, struct jitsrc *src, uint64_t now)
{
	int open_err;

	if (!src->job) {
		if (src->stopped || now < src->next_read)
			return;
		src->next_read = now + jm->refresh_ns;
	}
	src_job(jm, jp, src, &open_err);
}

/* A name in @src's reader, not while a job has it. */
static const struct jitsym *src_lookup(struct jitsrc *src, uint64_t addr)
{
	if (src->job)
		return NULL;
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
	uid_t owner;
	size_t i;

	if (!jp || fstat(fd, &st)) {
		close(fd);
		return jp ? -errno : -ENOMEM;
	}
	/*
	 * The file the process mapped (its identity checked): still, only
	 * its user's own, as a perf map (jitload__open_owned), so a process cannot make
	 * root read names out of another user's file it could map.
	 */
	if (fileid__proc_owner(jm->proc_root, pid, &owner) || !fileid__owned_by(&st, owner, false)) {
		pr_debug("jitmap: pid %u: '%s' is not the process user's alone: not read\n", pid, path);
		close(fd);
		return -EPERM;
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
	src_refresh(jm, jp, src, clock_ns(CLOCK_MONOTONIC_COARSE));
	return 0;
}

int jitmap__lookup(struct jitmap *jm, uint32_t pid, uint64_t pstart, uint64_t addr,
		   struct jit_hit *out)
{
	const struct jitsym *sym = NULL;
	struct jitsrc *src = NULL;
	uint64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
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
		if (jp->pm_state == PM_UNKNOWN || jp->pm_state == PM_OPENING ||
		    (jp->pm_state == PM_ABSENT && now >= jp->retry_at))
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
	jm->wait_ns = opts->wait_ns ? opts->wait_ns : WAIT_NS_DEFAULT;
	jm->pool = opts->pool;
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
