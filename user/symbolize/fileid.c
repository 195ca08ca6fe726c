// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fileid: opening a process's mapped file safely, its build-id, and the
 * bounded set of files kept open.
 *
 * The build-id reader is deliberately separate from elfsym: it runs when a
 * mapping appears, for every file mapped executable, most of which are
 * never sampled, so it reads the ELF header, the program and section header
 * tables and the note areas, nothing else.  Every offset and size it uses
 * is checked against the size fstat() gave, and the note bytes read per
 * file are bounded, whatever the headers claim.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <dirent.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "symbolize/elf/elfnote.h"
#include "symbolize/fileid.h"
#include "base/inputcap.h"
#include "base/util.h"

/* A note area holds a few hundred bytes: do not read a hostile giant one. */
#define NOTE_AREA_MAX	(1UL << 20)
/* Nor many areas pointing at the same megabyte. */
#define NOTES_BUDGET	(4UL << 20)

/* How open_at resolves a path. */
enum {
	IN_ROOT = 1,		/* inside @dirfd as the root (containers) */
	NO_SYMLINKS = 2,	/* through no symlink at all: a file another user wrote */
};

/* Open @path under @dirfd, resolved as @how says. */
static int open_at(int dirfd, const char *path, int flags, unsigned int how_)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (!how_)
		return open(path, flags | O_CLOEXEC);
	if (how_ & IN_ROOT)
		how.resolve |= RESOLVE_IN_ROOT;
	if (how_ & NO_SYMLINKS)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	/*
	 * An absolute symlink in a container must not lead to the host's
	 * file; RESOLVE_IN_ROOT alone does not promise to refuse magic links
	 * (/proc/PID/root, /proc/PID/fd/N) in the future.
	 */
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* Before 5.6: no way to stay inside; still resolve relative to it. */
	if (how_ & IN_ROOT)
		while (*path == '/')
			path++;
	return openat(dirfd, *path ? path : ".", flags | O_CLOEXEC | O_NOFOLLOW);
}

/*
 * 0 when @fd is a regular, non-empty file and, if @mp is set, the one @mp
 * maps; -ESTALE or -ENOEXEC.  Its fstat in *@st.
 */
static int check_file(int fd, const struct mapping *mp, struct stat *st)
{
	if (fstat(fd, st))
		return -errno;
	if (mp && ((uint64_t)st->st_dev != mp->dev || (uint64_t)st->st_ino != mp->ino))
		return -ESTALE;
	/* Written in place since it was mapped: not the bytes that ran. */
	if (mp && (mp->mtime_sec || mp->mtime_nsec) &&
	    (st->st_mtim.tv_sec != mp->mtime_sec || (uint64_t)st->st_mtim.tv_nsec != mp->mtime_nsec))
		return -ESTALE;
	if (!S_ISREG(st->st_mode) || st->st_size <= 0)
		return -ENOEXEC;
	return 0;
}

/*
 * Open @path for reading only if it is a regular file, and the file @mp
 * maps when @mp is set.  O_PATH first, so a FIFO or a device found there
 * is never opened for real; then the checked O_PATH fd itself is reopened,
 * so nothing can be swapped in between the check and the open.
 */
static int open_verified(int dirfd, const char *path, unsigned int in_root,
			 const struct mapping *mp, struct stat *st)
{
	struct stat first;
	char self[64];
	int pfd, fd, err;

	pfd = open_at(dirfd, path, O_PATH, in_root);
	if (pfd < 0)
		return -errno;
	err = check_file(pfd, mp, &first);
	if (err) {
		close(pfd);
		return err;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0)	/* no /proc of our own: open the name again, then check again */
		fd = open_at(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, in_root);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (!err) {
		err = check_file(fd, mp, st);
		if (!err && (st->st_dev != first.st_dev || st->st_ino != first.st_ino))
			err = -ESTALE;
		if (err)
			close(fd);
	}
	return err ? err : fd;
}

/*
 * Open @mp's file by its path inside the root of process @who ("self" or
 * a pid) if that process is in @mp's namespace, (@ns_dev, mp->mnt_ns): the
 * namespace and the root are read through one PROC_ROOT/WHO directory
 * fd, so they are one process's even if its pid is reused meanwhile.  The
 * fd, or -errno: -ESRCH when the process cannot be gone through (exited,
 * a zombie without namespaces, or refused), -EXDEV when it is in another
 * namespace, else the file's (open_verified).
 */
static int open_via(const char *proc_root, const char *who, uint64_t ns_dev,
		    const struct mapping *mp)
{
	char path[PATH_MAX];
	int dirfd, rootfd, fd, n;
	struct stat st;

	n = snprintf(path, sizeof(path), "%s/%s", proc_root, who);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	/* Follows the ns/mnt magic link to the namespace's nsfs inode. */
	if (fstatat(dirfd, "ns/mnt", &st, 0)) {
		fd = -ESRCH;
	} else if ((uint64_t)st.st_dev != ns_dev || (uint64_t)st.st_ino != mp->mnt_ns) {
		fd = -EXDEV;
	} else {
		rootfd = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0) {
			fd = -ESRCH;
		} else {
			fd = open_verified(rootfd, mp->path, IN_ROOT, mp, &st);
			close(rootfd);
		}
	}
	close(dirfd);
	return fd;
}

/* A file found but not usable says more than a route refused. */
static bool found_file(int err)
{
	return err == -ESTALE || err == -ENOEXEC;
}

/*
 * The last route of open_in_mnt_ns(): any live process of mp's
 * namespace, found by reading @proc_root (at most FILEID_SCAN_MAX
 * entries, one stat each).  The model knows only the processes it has
 * followed: under -a, from their first sample, so not the idle shell of
 * a container that starts its short programs.  The fd, or -errno as
 * open_via's (-ESRCH: none found).
 */
static int open_scanning(const char *proc_root, uint64_t ns_dev, uint32_t pid,
			 const struct mapping *mp)
{
	char path[PATH_MAX], self[16];
	int fd = -ESRCH, n = 0, err;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = opendir(proc_root);
	if (!d)
		return -ESRCH;
	snprintf(self, sizeof(self), "%u", pid);
	while ((de = readdir(d)) && n++ < FILEID_SCAN_MAX) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || !strcmp(de->d_name, self))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/ns/mnt", proc_root, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (stat(path, &st) || (uint64_t)st.st_dev != ns_dev || (uint64_t)st.st_ino != mp->mnt_ns)
			continue;
		err = open_via(proc_root, de->d_name, ns_dev, mp);
		if (err >= 0) {
			fd = err;
			break;
		}
		/*
		 * Gone since, moved, or rooted elsewhere (a chroot): the next
		 * one, keeping the error that got furthest.
		 */
		if (err != -ESRCH && err != -EXDEV && (fd == -ESRCH || found_file(err)))
			fd = err;
	}
	closedir(d);
	return fd;
}

/*
 * The namespace route of fileid__open_peers(), @pid being gone: the fd,
 * or -errno (-ESRCH: no live process of mp's namespace to go through).
 */
static int open_in_mnt_ns(const char *proc_root, const uint32_t *peers, size_t nr_peers,
			  uint32_t pid, const struct mapping *mp)
{
	char path[PATH_MAX], who[16];
	struct stat own;
	int fd, n;
	size_t i;

	if (!mp->mnt_ns)
		return -ESRCH;
	/* Ours tells nsfs's device too: every namespace's inode is on it. */
	n = snprintf(path, sizeof(path), "%s/self/ns/mnt", proc_root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &own))
		return -ESRCH;
	/* Ours: the route that needs no other process. */
	if ((uint64_t)own.st_ino == mp->mnt_ns)
		return open_via(proc_root, "self", (uint64_t)own.st_dev, mp);
	for (i = 0; i < nr_peers; i++) {
		if (peers[i] == pid)
			continue;
		snprintf(who, sizeof(who), "%u", peers[i]);
		fd = open_via(proc_root, who, (uint64_t)own.st_dev, mp);
		/* Gone too, or moved to another namespace since: the next one. */
		if (fd != -ESRCH && fd != -EXDEV)
			return fd;
	}
	return open_scanning(proc_root, (uint64_t)own.st_dev, pid, mp);
}

size_t fileid__ns_peers(const struct proc_table *procs, uint32_t pid, uint32_t mnt_ns,
			uint32_t *out, size_t max)
{
	const struct proc *p = NULL;
	size_t n = 0;

	while (procs && n < max && (p = proc_table__next_in_mnt_ns(procs, mnt_ns, p)))
		if (proc__pid(p) != pid)
			out[n++] = proc__pid(p);
	return n;
}

int fileid__open_mapped(const char *proc_root, const struct proc_table *procs, uint32_t pid,
			const struct mapping *mp)
{
	uint32_t peers[FILEID_PEERS_MAX];

	return fileid__open_peers(proc_root, peers,
				  fileid__ns_peers(procs, pid, mp->mnt_ns, peers, FILEID_PEERS_MAX),
				  pid, mp);
}

int fileid__open_peers(const char *proc_root, const uint32_t *peers, size_t nr_peers,
		       uint32_t pid, const struct mapping *mp)
{
	char path[PATH_MAX];
	int fd, dirfd, err;
	struct stat st;

	snprintf(path, sizeof(path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64,
		 proc_root, pid, mp->start, mp->end);
	fd = open_verified(AT_FDCWD, path, 0, mp, &st);
	if (fd >= 0)
		return fd;
	err = fd;
	if (!mp->path || mp->path[0] != '/')
		return err;
	snprintf(path, sizeof(path), "%s/%u/root", proc_root, pid);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0) {
		fd = open_verified(dirfd, mp->path, IN_ROOT, mp, &st);
		close(dirfd);
	} else {
		/* Gone: its MAP record was read after it exited (a 25 ms program). */
		fd = open_in_mnt_ns(proc_root, peers, nr_peers, pid, mp);
		if (fd >= 0)
			pr_debug("fileid: '%s': pid %u gone, opened in its mount namespace\n",
				 mp->path, pid);
		else if (!found_file(fd))
			fd = err;	/* no route got further than the first */
	}
	if (fd >= 0)
		return fd;
	return !found_file(fd) && found_file(err) ? err : fd;
}

int fileid__open_in_root(int root_fd, const char *path, struct stat *st)
{
	return open_verified(root_fd, path, root_fd != AT_FDCWD ? IN_ROOT : 0, NULL, st);
}

bool fileid__owned_by(const struct stat *st, uid_t owner, bool or_root)
{
	return (st->st_uid == owner || (or_root && st->st_uid == 0)) && !(st->st_mode & S_IWOTH);
}

int fileid__proc_owner(const char *proc_root, uint32_t pid, uid_t *uid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%u", proc_root, pid);
	if (stat(path, &st))
		return -ESRCH;
	*uid = st.st_uid;
	return 0;
}

int fileid__open_owned(int root_fd, const char *path, uid_t owner, bool or_root, struct stat *st)
{
	int fd;

	fd = open_verified(root_fd, path, NO_SYMLINKS | (root_fd != AT_FDCWD ? IN_ROOT : 0), NULL,
			   st);
	if (fd < 0)
		return fd;
	/* Checked on the fd we read: a rename or chmod after this changes nothing we read. */
	if (!fileid__owned_by(st, owner, or_root)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct note_reader {
	int fd;
	uint64_t fsize;
	bool swap;		/* the file's byte order is not ours */
	uint8_t *buf;		/* the largest note area read so far */
	size_t buf_size;
	size_t budget;		/* note bytes still allowed */
	uint8_t *id;
	size_t *len;
};

/*
 * Look for NT_GNU_BUILD_ID in the note area [off, off + size), with
 * elfsym's rules: a malformed note ends the area, a build-id longer than
 * FILEID_BUILD_ID_MAX is skipped.  1 when found, 0 when not, or -errno.
 */
static int scan_notes(struct note_reader *r, uint64_t off, uint64_t size, uint64_t align)
{
	size_t len;
	ssize_t n;
	long at;

	if (size > NOTE_AREA_MAX)
		inputcap__hit(INPUTCAP_NOTES);
	if (!size || size > NOTE_AREA_MAX || off > r->fsize || size > r->fsize - off)
		return 0;
	if (size > r->budget)
		return 0;
	r->budget -= size;
	if (size > r->buf_size) {
		uint8_t *buf = realloc(r->buf, size);

		if (!buf)
			return -ENOMEM;
		r->buf = buf;
		r->buf_size = size;
	}
	n = pread(r->fd, r->buf, size, (off_t)off);
	if (n < 0)
		return -errno;
	if ((uint64_t)n != size)
		return 0;	/* truncated under us */
	at = elfnote__build_id(r->buf, size, align, r->swap, FILEID_BUILD_ID_MAX, &len);
	if (at < 0)
		return 0;
	memcpy(r->id, r->buf + at, len);
	*r->len = len;
	return 1;
}

/* The entries of a header table: 0 when the header's claim does not fit the file. */
static size_t table_entries(Elf *elf, Elf_Type type, uint64_t off, size_t num,
			    size_t entsize, uint64_t fsize)
{
	size_t want = gelf_fsize(elf, type, 1, EV_CURRENT);

	if (!want || entsize != want || num > fsize / want || off > fsize ||
	    num * want > fsize - off)
		return 0;
	return num;
}

static int read_build_id(struct note_reader *r, Elf *elf)
{
	size_t phnum, shnum, i;
	GElf_Ehdr eh;
	int found = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	r->swap = eh.e_ident[EI_DATA] !=
		  (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	/* PN_XNUM and a zero e_shnum with extended numbering: libelf knows how. */
	if (elf_getphdrnum(elf, &phnum))
		phnum = 0;
	phnum = table_entries(elf, ELF_T_PHDR, eh.e_phoff, phnum, eh.e_phentsize, r->fsize);
	for (i = 0; i < phnum && !found; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			break;
		if (ph.p_type == PT_NOTE)
			found = scan_notes(r, ph.p_offset, ph.p_filesz, ph.p_align);
	}
	if (elf_getshdrnum(elf, &shnum))
		shnum = 0;
	shnum = table_entries(elf, ELF_T_SHDR, eh.e_shoff, shnum, eh.e_shentsize, r->fsize);
	for (i = 1; i < shnum && !found; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			break;
		if (sh.sh_type == SHT_NOTE)
			found = scan_notes(r, sh.sh_offset, sh.sh_size, sh.sh_addralign);
	}
	return found < 0 ? found : 0;
}

int fileid__build_id(int fd, uint8_t *id, size_t *len)
{
	struct note_reader r = { .fd = fd, .budget = NOTES_BUDGET, .id = id, .len = len };
	struct stat st;
	Elf *elf;
	int err;

	*len = 0;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < EI_NIDENT)
		return -ENOEXEC;
	r.fsize = (uint64_t)st.st_size;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	/* ELF_C_READ: libelf preads what it needs; never mmap a file we do not trust. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	err = read_build_id(&r, elf);
	elf_end(elf);
	free(r.buf);
	return err;
}

void fd_cache__put(struct fd_cache *c, struct fd_slot *slot, int fd)
{
	slot->fd = fd;
	lru__push_front(&c->lru, &slot->lru);
	c->nr++;
	while (c->nr > c->cap && c->lru.tail != &slot->lru)
		fd_cache__drop(c, lru_entry(c->lru.tail, struct fd_slot, lru));
}

void fd_cache__touch(struct fd_cache *c, struct fd_slot *slot)
{
	lru__touch(&c->lru, &slot->lru);
}

void fd_cache__drop(struct fd_cache *c, struct fd_slot *slot)
{
	if (slot->fd < 0)
		return;
	lru__unlink(&c->lru, &slot->lru);
	close(slot->fd);
	slot->fd = -1;
	c->nr--;
}
