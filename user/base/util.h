/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util: logging and strict number parsing shared by every module. */
#ifndef BPFSYM_UTIL_H
#define BPFSYM_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/*
 * One logging path, in libbpf's shape: levels, a print callback (stderr
 * by default), and a threshold that -v raises.  Messages name their
 * subject ("elfsym: '/usr/lib/libc.so.6': ..."); user-facing errors are
 * LOG_ERROR, always shown.  libbpf's own messages come through here too
 * (record/), so one callback sees everything.
 */
enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Where a message at or below the threshold goes; its return is ignored. */
typedef int (*log_print_fn)(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Messages at or below this level reach the callback; default LOG_WARN. */
void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);

/* Send messages to @fn (NULL: stderr again); returns the previous callback. */
log_print_fn log_set_print(log_print_fn fn);

void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level lvl, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Elements of an array (not a pointer). */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define pr_err(...)	log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Strict parsers: the whole string must be one number (C notation: 0x.. hex,
 * 0.. octal, decimal), no sign for unsigned, no trailing junk, no overflow.
 * 0 or -EINVAL / -ERANGE.
 */
int parse_u64(const char *s, uint64_t *out);
int parse_u32(const char *s, uint32_t *out);
/* Hexadecimal, with or without 0x (as addr2line reads addresses). */
int parse_hex_u64(const char *s, uint64_t *out);
/* A finite, non-negative decimal (fractions allowed). */
int parse_seconds(const char *s, double *out);

/*
 * A size: decimal digits and an optional unit B, K, M or G (case
 * ignored), into *@out in bytes.  0, -EINVAL (malformed), or -ERANGE (past
 * 2^62 bytes).
 */
int parse_size(const char *s, uint64_t *out);

/*
 * A duration as perf's --switch-output writes one: decimal digits and a
 * unit s, m, h or d (lower case: M is a size), into *@ns.  0, -EINVAL
 * (malformed, no unit), or -ERANGE (past 2^62 ns, 146 years).
 */
int parse_duration_ns(const char *s, uint64_t *ns);

/* Ring-buffer sizes allowed by -m/--mmap-pages: 1 page to 1 GiB. */
#define MMAP_PAGES_MAX_BYTES	(1ULL << 30)

/*
 * perf's -m/--mmap-pages: a number of pages ("64"), or a size with a unit
 * B, K, M or G ("256K"), which must come to a whole number of pages of
 * @page_size.  The pages must be a power of two (the kernel's ring buffer
 * wants one) between 1 and MMAP_PAGES_MAX_BYTES.  0 and *@pages set, or
 * -EINVAL (malformed), -ERANGE (out of range), -EDOM (not a power of two,
 * or not whole pages).  Unlike perf, never rounds: a size the user did not
 * ask for would change what a loss test means.
 */
int parse_mmap_pages(const char *s, uint64_t page_size, uint64_t *pages);

/*
 * Read at most @cap bytes of the file at @path into a new NUL-terminated
 * buffer (*@buf, freed by the caller), *@len set.  -E2BIG if larger than
 * @cap; -errno otherwise.  Works on /proc files (size 0 in stat).
 */
int read_file_capped(const char *path, size_t cap, char **buf, size_t *len);

/* The same from the open descriptor @fd (a pipe, stdin), read to its end; @fd stays open. */
int read_fd_capped(int fd, size_t cap, char **buf, size_t *len);

/*
 * An output file is written beside its name and renamed over it, so a
 * failure never leaves it half written; but a rename would replace a
 * device, a FIFO or /dev/stdout with a regular file.  When @path exists
 * and is a device or FIFO, *@fd is opened on it for writing in place
 * (through a symbolic link only when the link is root's or ours:
 * base/outfile.h); otherwise *@fd is -1 (write beside, rename).  0 or
 * -errno (*@fd -1; -EPERM: another user's link to a device).
 */
int output_open_special(const char *path, int *fd);

/*
 * pread() all of [@off, @off + @len) of @fd into @buf, unless the file ends
 * first (EINTR retried): the bytes read, or -errno.
 */
ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off);

/* @n bytes for people, into @buf (@len bytes): "812 bytes", "35.2 KiB", "12.0 MiB". */
/* @clk's time now, in ns (clock_gettime). */
uint64_t clock_ns(clockid_t clk);

void human_bytes(uint64_t n, char *buf, size_t len);

/*
 * Start @fn(@arg) on *@t, a thread born with every signal blocked:
 * Ctrl-C, SIGTERM and SIGCHLD stay the caller's, whose poll() they must
 * wake.  0 or -errno.
 */
int thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif /* BPFSYM_UTIL_H */
