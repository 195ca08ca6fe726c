// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* output: the recording's file, created safely in a held directory (output.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "record/output.h"

/* The one line for a create refused with @err. */
static void say_refused(const struct output *out, int err)
{
	struct stat st;

	if (err == -EEXIST && !fstatat(out->dfd, out->name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
		err = -EISDIR;
	if (err == -EEXIST && !fstatat(out->dfd, out->name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		pr_err("bpfsym: '%s' exists and is a symbolic link: not followed, not replaced "
		       "(-f replaces the link itself)\n", out->path);
	else if (err == -EEXIST)
		pr_err("bpfsym: '%s' exists: not replaced (-f replaces it, or choose another -o)\n", out->path);
	else if (err == -EPERM)
		pr_err("bpfsym: '%s' is another user's symbolic link to a device or FIFO: not followed\n",
		       out->path);
	else
		pr_err("bpfsym: cannot create '%s': %s\n", out->path, strerror(-err));
}

int output__open(struct output *out, const char *path, bool force, bool rotating)
{
	int err;

	*out = (struct output){ .path = path, .dfd = -1, .f = { .fd = -1 } };
	out->flags = (force ? OUTFILE_FORCE : 0) | (rotating ? 0 : OUTFILE_SPECIAL);
	err = outdir__open(path, &out->dfd, out->name, sizeof(out->name));
	if (err) {
		pr_err("bpfsym: cannot create '%s': %s\n", path, strerror(-err));
		return err;
	}
	err = outfile__create(out->dfd, out->name, out->flags, &out->f);
	if (err)
		say_refused(out, err);
	return err;
}

struct report_writer *output__writer(struct output *out, const struct rpt_header *h)
{
	struct report_writer *w;
	int err;

	/* The writer takes the fd, whatever happens; the name is removed below if need be. */
	w = report_writer__fdopen(outfile__take(&out->f), h);
	if (!w) {
		err = errno;
		outfile__discard(out->dfd, out->name, &out->f);
		errno = err;
		return NULL;
	}
	/* -f: the old file goes only now that the new one has its header. */
	err = outfile__commit(out->dfd, out->name, &out->f);
	if (err) {
		report_writer__abort(w);
		outfile__discard(out->dfd, out->name, &out->f);
		errno = -err;
		return NULL;
	}
	out->written = true;
	return w;
}

struct report_writer *output__next(struct output *out, const struct rpt_header *h)
{
	int err = outfile__create(out->dfd, out->name, out->flags & OUTFILE_FORCE, &out->f);

	if (err) {
		errno = -err;
		return NULL;
	}
	return output__writer(out, h);
}

int output__rename(struct output *out, const char *to)
{
	int err = outfile__is(out->dfd, out->name, &out->f);

	return err ? err : outfile__rename_new(out->dfd, out->name, to);
}

void output__discard(struct output *out)
{
	if (out->path && out->dfd >= 0)
		outfile__discard(out->dfd, out->name, &out->f);
}

int output__unlink(const struct output *out, const char *name)
{
	return unlinkat(out->dfd, name, 0) ? -errno : 0;
}

void output__close(struct output *out)
{
	if (!out->path)
		return;
	if (out->f.fd >= 0)
		close(out->f.fd);
	if (out->dfd >= 0)
		close(out->dfd);
	*out = (struct output){ .dfd = -1, .f = { .fd = -1 } };
}
