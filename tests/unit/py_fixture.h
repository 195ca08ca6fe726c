/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The installed CPython interpreters, and a child interpreter that says
 * what its own code objects are (id, co_firstlineno, co_qualname,
 * co_filename and the line of every instruction by co_positions()),
 * then its own stack (qualified names and lines, leaf first: main ->
 * outer -> a lambda called by map(), from C -> wait) and waits on stdin
 * in it: the oracle of test_pycode.  No root needed: the
 * child is ours.
 */
#ifndef BPFSYM_PY_FIXTURE_H
#define BPFSYM_PY_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Interpreters to try: Debian's, then pyenv's (each minor a glob; the first match). */
static const char *const py_fixture_pythons[] = {
	"/usr/bin/python3.11",
	"/root/.pyenv/versions/3.11.*/bin/python3.11",
	"/root/.pyenv/versions/3.12.*/bin/python3.12",
	"/root/.pyenv/versions/3.13.*/bin/python3.13",
};

/* The libraries pyenv builds hold the interpreter (Debian's executable holds its own). */
static const char *const py_fixture_libs[] = {
	"/usr/bin/python3.11",
	"/root/.pyenv/versions/3.11.*/lib/libpython3.11.so.1.0",
	"/root/.pyenv/versions/3.12.*/lib/libpython3.12.so.1.0",
	"/root/.pyenv/versions/3.13.*/lib/libpython3.13.so.1.0",
};

/* Older CPythons, which must be refused for their version. */
static const char *const py_fixture_old_libs[] = {
	"/root/.pyenv/versions/3.10.*/lib/libpython3.10.so.1.0",
	"/root/.pyenv/versions/3.9.*/lib/libpython3.9.so.1.0",
};

/* The first file @pattern names, into @out: false when none. */
static inline bool py_fixture_glob(const char *pattern, char *out, size_t cap)
{
	glob_t g;
	bool ok;

	if (glob(pattern, 0, NULL, &g))
		return false;
	ok = g.gl_pathc > 0 && access(g.gl_pathv[0], R_OK) == 0;
	if (ok)
		snprintf(out, cap, "%s", g.gl_pathv[0]);
	globfree(&g);
	return ok;
}

/*
 * The script: functions whose names are ASCII, dotted (a nested class's
 * method), latin-1, UCS-2 and UCS-4 str objects; its file name holds a
 * UCS-2 character.  Strings travel as hex, so nothing in them can break
 * a line.
 */
static const char py_fixture_script[] =
	"import dis, sys, threading\n"
	"def plain():\n"
	"    return 1\n"
	"class Outer:\n"
	"    class Inner:\n"
	"        def method(self, n):\n"
	"            x = 1\n"
	"            for i in range(n):\n"
	"                x += i\n"
	"            return x\n"
	"def gr\xc3\xb6\xc3\x9f" "e(n):\n"
	"    s = 0\n"
	"    for i in range(n):\n"
	"        s += i * 2\n"
	"    return s\n"
	"def \xe5\x87\xbd\xe6\x95\xb0():\n"
	"    return [i for i in range(3)]\n"
	"def \xf0\xa0\x80\x80(a, b):\n"
	"    try:\n"
	"        return a / b\n"
	"    except ZeroDivisionError:\n"
	"        return None\n"
	"def gen(n):\n"
	"    yield n\n"
	"def out(c):\n"
	"    ls = ' '.join('%d:%d' % (i, -1 if p[0] is None else p[0])\n"
	"                  for i, p in enumerate(c.co_positions()))\n"
	"    resume = next(i.offset // 2 for i in dis.get_instructions(c) if i.opname == 'RESUME')\n"
	"    print('CODE', id(c), c.co_firstlineno, resume, c.co_qualname.encode().hex(),\n"
	"          c.co_filename.encode().hex(), ls)\n"
	"for f in (plain, Outer.Inner.method, gr\xc3\xb6\xc3\x9f" "e, \xe5\x87\xbd\xe6\x95\xb0, "
	"\xf0\xa0\x80\x80, gen, out):\n"
	"    out(f.__code__)\n"
	"def stack():\n"
	"    f, st = sys._getframe(1), []\n"
	"    while f:\n"
	"        st.append('%s:%d' % (f.f_code.co_qualname.encode().hex(), f.f_lineno))\n"
	"        f = f.f_back\n"
	"    return ' '.join(st)\n"
	"def other():\n"
	"    return 'OTHER %d %d %d' % (id('not a code object'), id(None), threading.get_ident())\n"
	"def wait():\n"
	"    print('STACK', stack()); print(other(), flush=True); sys.stdin.readline()\n"
	"def outer():\n"
	"    return list(map(lambda _: wait(), [0]))\n"
	"def main():\n"
	"    outer()\n"
	"main()\n";

/* The script's file name in its directory: a UCS-2 character (lambda). */
#define PY_FIXTURE_FILE "pr\xce\xbb" "fung.py"

struct py_fixture {
	pid_t pid;
	int in, out;		/* the child's stdin (ours to write), its stdout */
	char *text;		/* what it printed, up to its OTHER line */
	size_t len;
};

/* Write the script into @dir: 0 or -errno. */
static inline int py_fixture_write(const char *dir, char *path, size_t cap)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", dir, PY_FIXTURE_FILE);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(py_fixture_script, f);
	return fclose(f) ? -EIO : 0;
}

/* Read the child's stdout until its OTHER line (10 s at most): 0 or -ETIMEDOUT / -EIO. */
static inline int py_fixture_read(struct py_fixture *fx)
{
	size_t cap = 1 << 20;

	fx->text = malloc(cap);
	fx->len = 0;
	while (fx->text) {
		struct pollfd pfd = { .fd = fx->out, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 10000) <= 0)
			return -ETIMEDOUT;
		n = read(fx->out, fx->text + fx->len, cap - 1 - fx->len);
		if (n <= 0)
			return -EIO;
		fx->len += (size_t)n;
		fx->text[fx->len] = 0;
		if (strstr(fx->text, "OTHER ") && fx->text[fx->len - 1] == '\n')
			return 0;
		if (fx->len == cap - 1)
			return -E2BIG;
	}
	return -ENOMEM;
}

/* Start @python on @script: 0 with the child waiting, or -errno (its output then in fx->text). */
static inline int py_fixture_start(struct py_fixture *fx, const char *python, const char *script)
{
	int in[2], out[2];

	memset(fx, 0, sizeof(*fx));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	fx->pid = fork();
	if (fx->pid < 0)
		return -errno;
	if (!fx->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(python, python, "-I", script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx->in = in[1];
	fx->out = out[0];
	return py_fixture_read(fx);
}

/* End the child: close its stdin (it returns from readline), then reap it. */
static inline void py_fixture_stop(struct py_fixture *fx)
{
	int status;

	if (fx->pid > 0) {
		close(fx->in);
		if (waitpid(fx->pid, &status, 0) < 0)
			kill(fx->pid, SIGKILL);
		close(fx->out);
	}
	free(fx->text);
	fx->pid = 0;
	fx->text = NULL;
}

/* Hex to bytes, in place into @out (@cap bytes, NUL-terminated): false when malformed. */
static inline bool py_fixture_unhex(const char *hex, char *out, size_t cap)
{
	size_t n = strlen(hex) / 2, i;

	if (strlen(hex) % 2 || n >= cap)
		return false;
	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (char)v;
	}
	out[n] = 0;
	return true;
}

#endif /* BPFSYM_PY_FIXTURE_H */
