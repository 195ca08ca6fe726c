// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/outfile.h"
#include "base/util.h"

static enum log_level log_level = LOG_WARN;

static __attribute__((format(printf, 2, 0))) int print_stderr(enum log_level level, const char *fmt,
								 va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static log_print_fn log_print = print_stderr;

void log_set_level(enum log_level lvl)
{
	log_level = lvl;
}

enum log_level log_get_level(void)
{
	return log_level;
}

log_print_fn log_set_print(log_print_fn fn)
{
	log_print_fn old = log_print;

	log_print = fn ? fn : print_stderr;
	return old;
}

void log_vmsg(enum log_level lvl, const char *fmt, va_list ap)
{
	if (lvl > log_level)
		return;
	log_print(lvl, fmt, ap);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lvl, fmt, ap);
	va_end(ap);
}

int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts leading blanks and a sign; we do not. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_hex_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = parse_u64(s, &v);

	if (err)
		return err;
	if (v > UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	const char *units = "BKMG", *u;
	uint64_t v = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > (1ull << 62))
			return -ERANGE;
	}
	if (*s) {
		u = strchr(units, toupper((unsigned char)*s));
		if (!u || s[1])
			return -EINVAL;
		if (v > (1ull << 62) >> (10 * (u - units)))
			return -ERANGE;
		v <<= 10 * (u - units);
	}
	*out = v;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct {
		char unit;
		uint64_t secs;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	uint64_t v = 0, limit = (1ull << 62) / 1000000000ull;
	size_t i;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > limit)
			return -ERANGE;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]) && units[i].unit != *s; i++)
		;
	if (i == sizeof(units) / sizeof(units[0]) || s[1])
		return -EINVAL;
	if (v > limit / units[i].secs)
		return -ERANGE;
	*ns = v * units[i].secs * 1000000000ull;
	return 0;
}

int parse_mmap_pages(const char *s, uint64_t page_size, uint64_t *pages)
{
	static const struct {
		char unit;
		unsigned int shift;
	} units[] = { { 'B', 0 }, { 'K', 10 }, { 'M', 20 }, { 'G', 30 } };
	unsigned int shift = 0;
	bool is_size = false;
	uint64_t v = 0, max;
	size_t i;

	if (!s || !page_size || (page_size & (page_size - 1)) || !isdigit((unsigned char)*s))
		return -EINVAL;
	/* Decimal only ("010" is ten pages, as perf reads it); stop past the cap. */
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > MMAP_PAGES_MAX_BYTES)
			return -ERANGE;
	}
	if (*s) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (toupper((unsigned char)*s) == units[i].unit)
				break;
		if (i == sizeof(units) / sizeof(units[0]) || s[1])
			return -EINVAL;
		is_size = true;
		shift = units[i].shift;
	}
	max = is_size ? MMAP_PAGES_MAX_BYTES >> shift : MMAP_PAGES_MAX_BYTES / page_size;
	if (v == 0 || v > max)
		return -ERANGE;
	if (is_size) {
		v <<= shift;
		if (v % page_size)
			return -EDOM;
		v /= page_size;
	}
	if (v & (v - 1))
		return -EDOM;
	*pages = v;
	return 0;
}

int output_open_special(const char *path, int *fd)
{
	char name[OUTFILE_NAME_MAX];
	struct outfile of;
	int dfd, err;

	*fd = -1;
	err = outdir__open(path, &dfd, name, sizeof(name));
	if (err)
		return err;
	err = outfile__open_special(dfd, name, &of);
	if (!err)
		*fd = outfile__take(&of);
	close(dfd);
	return err < 0 ? err : 0;
}

int read_fd_capped(int fd, size_t cap, char **buf, size_t *len)
{
	size_t size = 0, alloc = 4096;
	char *p, *tmp;
	ssize_t n;
	int err;

	p = malloc(alloc);
	if (!p)
		return -ENOMEM;
	for (;;) {
		if (size + 1 >= alloc) {
			if (alloc > cap) {
				err = -E2BIG;
				goto fail;
			}
			alloc *= 2;
			tmp = realloc(p, alloc);
			if (!tmp) {
				err = -ENOMEM;
				goto fail;
			}
			p = tmp;
		}
		n = read(fd, p + size, alloc - size - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		size += (size_t)n;
		if (size > cap) {
			err = -E2BIG;
			goto fail;
		}
	}
	p[size] = '\0';
	*buf = p;
	*len = size;
	return 0;
fail:
	free(p);
	return err;
}

int read_file_capped(const char *path, size_t cap, char **buf, size_t *len)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_fd_capped(fd, cap, buf, len);
	close(fd);
	return err;
}

ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void human_bytes(uint64_t n, char *buf, size_t len)
{
	const uint64_t kib = 1024, mib = 1024 * kib;

	if (n >= 10 * mib)
		snprintf(buf, len, "%.1f MiB", n / (double)mib);
	else if (n >= 10 * kib)
		snprintf(buf, len, "%.1f KiB", n / (double)kib);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
}

int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}
