// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debuginfod: the client side of a build-id lookup (debuginfod.h).
 *
 * libdebuginfod is loaded with dlopen(): a bpfsym built on a machine with
 * libdebuginfod-dev runs where libdebuginfod1 is not installed, and a
 * recording that does not set DEBUGINFOD_URLS never loads it (nor
 * libcurl, which it pulls in).  The header gives the prototypes, so the
 * function pointers are checked against the library's own declarations.
 *
 * One client per fetch: a client is not safe to share between threads,
 * and fetches run on several workers; making one is a malloc and a curl
 * handle, nothing next to a download.
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "symbolize/debuginfod.h"
#include "symbolize/fileid.h"

static struct {
	bool tried, ok;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
} lib;

static atomic_bool stopping;
static atomic_uint_fast64_t counts[DINFOD__NR];

bool dinfod__enabled(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	void *h;

	if (!urls || !*urls)
		return false;
	if (lib.tried)
		return lib.ok;
	lib.tried = true;
	h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pr_warn("debuginfod: DEBUGINFOD_URLS is set but %s cannot be loaded (%s): "
			"install libdebuginfod1 to fetch debug files\n", DEBUGINFOD_SONAME, dlerror());
		return false;
	}
	lib.begin = (__typeof__(lib.begin))dlsym(h, "debuginfod_begin");
	lib.end = (__typeof__(lib.end))dlsym(h, "debuginfod_end");
	lib.find_debuginfo = (__typeof__(lib.find_debuginfo))dlsym(h, "debuginfod_find_debuginfo");
	lib.set_progressfn = (__typeof__(lib.set_progressfn))dlsym(h, "debuginfod_set_progressfn");
	lib.ok = lib.begin && lib.end && lib.find_debuginfo && lib.set_progressfn;
	if (!lib.ok) {
		pr_warn("debuginfod: %s lacks a function bpfsym needs: no debug files fetched\n",
			DEBUGINFOD_SONAME);
		dlclose(h);
		return false;
	}
	pr_debug("debuginfod: debug files by build-id from '%s'\n", urls);
	return true;
}

/* libdebuginfod's progress call (about once a second, and per chunk): non-zero aborts. */
static int progress(debuginfod_client *c, long done, long total)
{
	(void)c, (void)done, (void)total;
	return atomic_load(&stopping) ? 1 : 0;
}

/* Ask the servers for @id's debug file: its path in libdebuginfod's cache, or NULL and *@err. */
static char *ask(const uint8_t *id, size_t len, int *err)
{
	debuginfod_client *c;
	char *path = NULL;
	int fd;

	c = lib.begin();
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	lib.set_progressfn(c, progress);
	atomic_fetch_add(&counts[DINFOD_ASKED], 1);
	fd = lib.find_debuginfo(c, id, (int)len, &path);
	lib.end(c);
	/* Its fd is not used: the file is opened again below, without following links. */
	if (fd >= 0) {
		close(fd);
		if (!path)
			*err = -ENOENT;
		return path;
	}
	free(path);
	*err = fd;
	return NULL;
}

/* Open @path as a hostile file: no link, a non-empty regular file.  An fd or -errno. */
static int open_served(const char *path)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

/* Open and check the file at @path as @id's debug file.  Its symbols, or NULL and *@err. */
static struct elfsym *check(const char *path, const uint8_t *id, size_t len,
			    const struct elfsym_opts *opts, int *err)
{
	uint8_t got[FILEID_BUILD_ID_MAX];
	struct elfsym *es = NULL;
	size_t got_len;
	int fd;

	fd = open_served(path);
	if (fd < 0) {
		*err = fd == -ELOOP ? -ENOEXEC : fd;
		return NULL;
	}
	*err = fileid__build_id(fd, got, &got_len);
	if (!*err && (got_len != len || memcmp(got, id, len)))
		*err = -ESTALE;
	if (!*err) {
		es = elfsym__open_fd(fd, path, opts);
		if (!es)
			*err = -errno;
	}
	close(fd);
	return es;
}

static void count_outcome(int err)
{
	enum dinfod_count c = DINFOD_MISSED;

	if (!err)
		c = DINFOD_FOUND;
	else if (err == -ETIME || err == -ETIMEDOUT || err == -EINTR || atomic_load(&stopping))
		c = DINFOD_TIMED_OUT;	/* libdebuginfod 0.188 says ENOENT when its progress call aborts */
	atomic_fetch_add(&counts[c], 1);
}

/* The -v line for build-id @id's lookup that failed with @err (@path: the file served, or NULL). */
static void log_miss(const uint8_t *id, size_t len, const char *path, int err)
{
	char hex[2 * FILEID_BUILD_ID_MAX + 1];

	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * len] = '\0';
	if (!path)
		pr_debug("debuginfod: build-id %s: %s\n", hex,
			 err == -ENOENT ? "no debug file on the servers" : strerror(-err));
	else
		pr_debug("debuginfod: build-id %s: '%s' not used: %s\n", hex, path,
			 err == -ESTALE ? "another build-id" :
			 err == -ENOEXEC ? "not a regular ELF file" : strerror(-err));
}

struct elfsym *dinfod__fetch(const uint8_t *id, size_t len, const char *cached,
			     const struct elfsym_opts *opts, char **path, int *err)
{
	struct elfsym *es = NULL;
	char *p;

	*path = NULL;
	*err = 0;
	if (!len || len > FILEID_BUILD_ID_MAX || !lib.ok) {
		*err = -EINVAL;
		return NULL;
	}
	if (atomic_load(&stopping)) {
		*err = -EINTR;
		return NULL;
	}
	p = cached ? strdup(cached) : ask(id, len, err);
	if (!p) {
		*err = *err ? *err : -ENOMEM;
	} else {
		es = check(p, id, len, opts, err);
	}
	if (!cached)
		count_outcome(*err);
	if (*err) {
		log_miss(id, len, p, *err);
		free(p);
		return NULL;
	}
	*path = p;
	return es;
}

void dinfod__stop(void)
{
	atomic_store(&stopping, true);
}

uint64_t dinfod__count(enum dinfod_count c)
{
	return (unsigned int)c < DINFOD__NR ? atomic_load(&counts[c]) : 0;
}

const char *dinfod__what(enum dinfod_count c)
{
	static const char *const what[DINFOD__NR] = {
		[DINFOD_ASKED] = "asked",
		[DINFOD_FOUND] = "found",
		[DINFOD_MISSED] = "missed",
		[DINFOD_TIMED_OUT] = "timed out",
	};

	return (unsigned int)c < DINFOD__NR ? what[c] : NULL;
}

void dinfod__log_counts(void)
{
	if (!dinfod__count(DINFOD_ASKED))
		return;
	pr_debug("bpfsym: debuginfod: %llu build-ids asked, %llu found, %llu missed, %llu timed out\n",
		 (unsigned long long)dinfod__count(DINFOD_ASKED),
		 (unsigned long long)dinfod__count(DINFOD_FOUND),
		 (unsigned long long)dinfod__count(DINFOD_MISSED),
		 (unsigned long long)dinfod__count(DINFOD_TIMED_OUT));
}
