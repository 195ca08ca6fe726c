// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * httpd_listen: the endpoint's listening socket, TCP ("[ADDR:]PORT",
 * "[IPV6]:PORT") or a unix socket ("unix:PATH").  A unix socket is a file
 * root makes in a directory others may share, so it is made the way
 * perf's outputs are: never through a symlink, never over a file it did
 * not make, with its mode set before anyone can connect (bind() under a
 * umask, then the group, then listen()), and removed at the end only if
 * the file there is still the one bind() made.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/httpd.h"
#include "base/util.h"

#define UNIX_PREFIX	"unix:"

/* Decimal digits only (no sign, no 0x: a port is not C notation), 1..65535. */
static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (!i || !v || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int httpd__parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
		      char *err, size_t errlen)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon, *port_s;
	char host[INET6_ADDRSTRLEN + 1];
	size_t hlen;
	uint16_t port;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		colon = strstr(spec, "]:");
		hlen = colon ? (size_t)(colon - spec - 1) : 0;
		port_s = colon ? colon + 2 : "";
	} else {
		colon = strrchr(spec, ':');
		hlen = colon ? (size_t)(colon - spec) : 0;
		port_s = colon ? colon + 1 : spec;
	}
	if (parse_port(port_s, &port)) {
		snprintf(err, errlen, "expected [ADDR:]PORT with a port of 1 to 65535, or unix:PATH");
		return -EINVAL;
	}
	if (hlen >= sizeof(host) || (colon && !hlen)) {
		snprintf(err, errlen, "expected an IPv4 address or [IPv6] before the port");
		return -EINVAL;
	}
	memcpy(host, spec[0] == '[' ? spec + 1 : spec, hlen);
	host[hlen] = '\0';
	if (spec[0] == '[') {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1)
			return 0;
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof(*in4);
		if (inet_pton(AF_INET, colon ? host : "127.0.0.1", &in4->sin_addr) == 1)
			return 0;
	}
	snprintf(err, errlen, "'%s' is not an IP address", host);
	return -EINVAL;
}

static int listen_tcp(const char *spec, struct httpd_listener *l, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, e;

	e = httpd__parse_addr(spec, &ss, &len, err, errlen);
	if (e)
		return e;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-e));
		return e;
	}
	/* A restart must not wait for the old connections' TIME_WAIT; a live listener still refuses. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		e = -errno;
		snprintf(err, errlen, "%s", strerror(-e));
		close(fd);
		return e;
	}
	l->fd = fd;
	l->family = ss.ss_family;
	return 0;
}

/*
 * What is at @sun's path already: nothing (0); a socket of ours that
 * nobody listens on, a previous run's, removed (0); else -EEXIST or
 * -EADDRINUSE with why in @err.
 */
static int unix_clear(const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	if (lstat(sun->sun_path, &st)) {
		if (errno == ENOENT)
			return 0;
		e = -errno;
		snprintf(err, errlen, "'%s': %s", sun->sun_path, strerror(-e));
		return e;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "'%s' exists and is not a socket this user made: not replaced",
			 sun->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-e));
		return e;
	}
	e = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) ? errno : 0;
	close(fd);
	if (e != ECONNREFUSED) {
		snprintf(err, errlen, "'%s': %s", sun->sun_path,
			 e ? strerror(e) : "Address already in use (a server listens there)");
		return -EADDRINUSE;
	}
	if (unlink(sun->sun_path) && errno != ENOENT) {
		e = -errno;
		snprintf(err, errlen, "removing the stale socket '%s': %s", sun->sun_path, strerror(-e));
		return e;
	}
	return 0;
}

/* Bind @fd at @sun's path: 0600, or 0660 in @group; the file's identity into @l.  0 or -errno. */
static int unix_bind(int fd, const struct sockaddr_un *sun, gid_t group, struct httpd_listener *l,
		     char *err, size_t errlen)
{
	struct stat st;
	mode_t old;
	int e = 0;

	/* The process is one thread still (agent__listen comes first): the umask is ours. */
	old = umask(group == HTTPD_NO_GROUP ? 0177 : 0117);
	if (bind(fd, (const struct sockaddr *)sun, sizeof(*sun)))
		e = -errno;
	umask(old);
	if (e) {
		snprintf(err, errlen, "'%s': %s", sun->sun_path, strerror(-e));
		return e;
	}
	if (lstat(sun->sun_path, &st) || !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "'%s': the socket just made is gone", sun->sun_path);
		return -ENOENT;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (group != HTTPD_NO_GROUP && fchownat(AT_FDCWD, sun->sun_path, (uid_t)-1, group, AT_SYMLINK_NOFOLLOW)) {
		e = -errno;
		snprintf(err, errlen, "'%s': giving it group %u: %s", sun->sun_path, (unsigned)group, strerror(-e));
		return e;
	}
	return 0;
}

static int listen_unix(const char *path, gid_t group, struct httpd_listener *l, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, e;

	if (!*path || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "expected unix:PATH with a path of 1 to %zu bytes", sizeof(sun.sun_path) - 1);
		return -EINVAL;
	}
	strcpy(sun.sun_path, path);
	e = unix_clear(&sun, err, errlen);
	if (e)
		return e;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-e));
		return e;
	}
	l->fd = fd;
	l->family = AF_UNIX;
	l->group = group;
	memcpy(l->path, sun.sun_path, sizeof(l->path));
	e = unix_bind(fd, &sun, group, l, err, errlen);
	if (!e) {
		if (listen(fd, 64)) {
			e = -errno;
			snprintf(err, errlen, "'%s': listen: %s", path, strerror(-e));
		}
	}
	if (e) {
		/* Removed only if bind made it (l->ino set); whatever was there before stays. */
		httpd_listener__close(l);
	}
	return e;
}

int httpd__listen(const char *spec, gid_t group, struct httpd_listener *l, char *err, size_t errlen)
{
	*l = (struct httpd_listener){ .fd = -1, .group = HTTPD_NO_GROUP };
	if (!strncmp(spec, UNIX_PREFIX, strlen(UNIX_PREFIX)))
		return listen_unix(spec + strlen(UNIX_PREFIX), group, l, err, errlen);
	if (group != HTTPD_NO_GROUP) {
		snprintf(err, errlen, "a group goes with unix:PATH only (TCP has no peer credentials)");
		return -EINVAL;
	}
	return listen_tcp(spec, l, err, errlen);
}

void httpd_listener__close(struct httpd_listener *l)
{
	struct stat st;

	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->path[0] && l->ino && !lstat(l->path, &st) && S_ISSOCK(st.st_mode) &&
	    st.st_dev == l->dev && st.st_ino == l->ino && unlink(l->path))
		pr_warn("bpfsym: --listen: removing '%s': %s\n", l->path, strerror(errno));
	l->path[0] = '\0';
	l->ino = 0;
}
