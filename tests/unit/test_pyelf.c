// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * runtime/python/pyelf: the interpreter found in each installed CPython
 * 3.11-3.13 file, its version equal to what the interpreter itself says
 * (sys.hexversion), its addresses to readelf's, its offsets to the
 * table's; older CPythons refused for their version, other files as not
 * interpreters; and copies of the real files with one check's witness
 * changed refused as disagreeing, so each check can fail.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "runtime/python/pyelf.h"
#include "py_fixture.h"
#include "test.h"

TEST_SUITE("pyelf")

static int probe_path(const char *path, struct py_layout *l, enum py_miss *why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = pyelf__probe(fd, path, l, why);
	close(fd);
	return err;
}

/* A symbol's value and size as readelf --dyn-syms says: false when it does not list it. */
static bool readelf_sym(const char *file, const char *name, uint64_t *value, uint64_t *size)
{
	char cmd[1024], line[1024];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		char sym[256], sz[32];
		uint64_t v;

		if (sscanf(line, "%*s %" SCNx64 " %31s %*s %*s %*s %*s %255s", &v, sz, sym) == 3 &&
		    !strcmp(sym, name) && !found) {
			*value = v;
			*size = strtoull(sz, NULL, 0);
			found = true;
		}
	}
	pclose(p);
	return found;
}

/* What the interpreter @python says its sys.hexversion is: 0 when it does not. */
static uint32_t hexversion(const char *python)
{
	char cmd[1024];
	unsigned v = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' -I -c 'import sys; print(sys.hexversion)'", python);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (fscanf(p, "%u", &v) != 1)
		v = 0;
	pclose(p);
	return v;
}

static void check_addr(const char *lib, const char *sym, uint64_t got)
{
	uint64_t value, size;

	if (ASSERT_TRUE(readelf_sym(lib, sym, &value, &size), sym))
		ASSERT_EQ(got, value, sym);
}

static void test_probe_installed(void)
{
	char lib[512], python[512];
	int found = 0;
	size_t i;

	if (!test__have("readelf")) {
		test__skip("no readelf");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(py_fixture_libs); i++) {
		struct py_layout l, t;
		enum py_miss why;
		uint64_t v, size;

		if (!py_fixture_glob(py_fixture_libs[i], lib, sizeof(lib)) ||
		    !py_fixture_glob(py_fixture_pythons[i], python, sizeof(python)))
			continue;
		found++;
		if (!ASSERT_OK(probe_path(lib, &l, &why), lib))
			continue;
		ASSERT_EQ(l.version, hexversion(python), "Py_Version is sys.hexversion");
		check_addr(lib, "_PyRuntime", l.runtime);
		check_addr(lib, "PyCode_Type", l.code_type);
		check_addr(lib, "PyUnicode_Type", l.str_type);
		check_addr(lib, "PyBytes_Type", l.bytes_type);
		if (ASSERT_TRUE(readelf_sym(lib, "_PyEval_EvalFrameDefault", &v, &size), "eval")) {
			ASSERT_EQ(l.eval_start, v, "eval start");
			ASSERT_EQ(l.eval_size, size, "eval size");
		}
		if (!ASSERT_OK(pyelf__table(l.version, &t), "table"))
			continue;
		t.runtime = l.runtime;
		t.eval_start = l.eval_start;
		t.eval_size = l.eval_size;
		t.code_type = l.code_type;
		t.str_type = l.str_type;
		t.bytes_type = l.bytes_type;
		ASSERT_TRUE(!memcmp(&t, &l, sizeof(l)), "the offsets are the table's");
	}
	if (!found)
		test__skip("no CPython 3.11-3.13 installed");
}

static void expect_miss(const char *path, enum py_miss want)
{
	struct py_layout l;
	enum py_miss why = PY_MISS_NONE;

	if (ASSERT_EQ(probe_path(path, &l, &why), -ENOENT, path))
		ASSERT_STREQ(pyelf__miss_str(why), pyelf__miss_str(want), path);
}

static void test_probe_misses(void)
{
	char path[512], dir[] = "/tmp/bpfsym-pyelf.XXXXXX", text[600];
	size_t i;
	FILE *f;

	expect_miss("/bin/sh", PY_MISS_NOT_PYTHON);
	if (py_fixture_glob("/lib/x86_64-linux-gnu/libc.so.6", path, sizeof(path)))
		expect_miss(path, PY_MISS_NOT_PYTHON);
	/* pyenv's executables link libpython: the interpreter is not in them. */
	if (py_fixture_glob("/root/.pyenv/versions/3.12.*/bin/python3.12", path, sizeof(path)))
		expect_miss(path, PY_MISS_NOT_PYTHON);
	for (i = 0; i < ARRAY_SIZE(py_fixture_old_libs); i++)
		if (py_fixture_glob(py_fixture_old_libs[i], path, sizeof(path)))
			expect_miss(path, PY_MISS_VERSION);
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(text, sizeof(text), "%s/text", dir);
	f = fopen(text, "w");
	if (ASSERT_OK_PTR(f, "text file")) {
		fputs("\x7f" "ELF but not really\n", f);
		fclose(f);
		expect_miss(text, PY_MISS_NOT_ELF);
		truncate(text, 0);
		expect_miss(text, PY_MISS_NOT_ELF);
		unlink(text);
	}
	expect_miss(dir, PY_MISS_NOT_ELF);	/* a directory */
	rmdir(dir);
}

/* The file offset of @vaddr in the ELF file on @fd (its PT_LOADs): 0 when none holds it. */
static off_t vaddr_off(int fd, uint64_t vaddr)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			return 0;
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			return (off_t)(vaddr - ph.p_vaddr + ph.p_offset);
	}
	return 0;
}

/*
 * Copy @lib to @copy, write the 8 bytes @val at virtual address @vaddr of
 * the copy, and probe it: the miss it gives, or PY_MISS_NONE.
 */
static enum py_miss probe_patched(const char *lib, const char *copy, uint64_t vaddr, uint64_t val)
{
	int in = open(lib, O_RDONLY | O_CLOEXEC), out;
	struct py_layout l;
	enum py_miss why = PY_MISS__NR;	/* the copy failed */
	struct stat st;
	off_t off;

	out = open(copy, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (in < 0 || out < 0 || fstat(in, &st) ||
	    sendfile(out, in, NULL, (size_t)st.st_size) != st.st_size)
		goto out;
	off = vaddr_off(out, vaddr);
	if (!off || pwrite(out, &val, sizeof(val), off) != sizeof(val))
		goto out;
	pyelf__probe(out, copy, &l, &why);
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	unlink(copy);
	return why;
}

/*
 * Where the co_firstlineno PyMemberDef of PyCode_Type's tp_members holds
 * its offset, in a file whose pointers need no relocation (an ET_EXEC,
 * like Debian's python3.11): 0 when not such a file or not found.
 */
static uint64_t firstlineno_member(const char *lib, const struct py_layout *l)
{
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	uint64_t arr = 0, name, at = 0;
	char s[16];
	int k;

	if (fd < 0)
		return 0;
	if (pread(fd, &arr, 8, vaddr_off(fd, l->code_type + 240)) != 8)
		arr = 0;
	for (k = 0; arr && k < 64 && !at; k++) {
		off_t o = vaddr_off(fd, arr + 40 * k);

		if (!o || pread(fd, &name, 8, o) != 8 || !name || !vaddr_off(fd, name) ||
		    pread(fd, s, sizeof(s), vaddr_off(fd, name)) != sizeof(s))
			break;
		if (!memcmp(s, "co_firstlineno", 15))
			at = arr + 40 * k + 16;
	}
	close(fd);
	return at;
}

static void test_probe_tampered(void)
{
	char dir[] = "/tmp/bpfsym-pyelf.XXXXXX", copy[600], lib[512];
	int done = 0;
	size_t i;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(copy, sizeof(copy), "%s/libpython.so", dir);
	for (i = 0; i < ARRAY_SIZE(py_fixture_libs); i++) {
		struct py_layout l;
		enum py_miss why;
		uint64_t ver, size;

		if (!py_fixture_glob(py_fixture_libs[i], lib, sizeof(lib)) ||
		    probe_path(lib, &l, &why) || !readelf_sym(lib, "Py_Version", &ver, &size))
			continue;
		done++;
		ASSERT_EQ((int)probe_patched(lib, copy, l.code_type + 32, l.co_code_adaptive), (int)PY_MISS_NONE,
			  "the copy unchanged probes as the file");
		ASSERT_EQ((int)probe_patched(lib, copy, l.code_type + 32, l.co_code_adaptive + 8),
			  (int)PY_MISS_CHECK, "PyCode_Type's tp_basicsize is not co_code_adaptive");
		ASSERT_EQ((int)probe_patched(lib, copy, ver, 0x030a0cf0), (int)PY_MISS_VERSION,
			  "3.10 in Py_Version");
		ASSERT_EQ((int)probe_patched(lib, copy, ver, 0x030e00f0), (int)PY_MISS_VERSION,
			  "3.14 in Py_Version");
		size = firstlineno_member(lib, &l);
		if (size) {
			printf("     note: %s: co_firstlineno's PyMemberDef at %#" PRIx64 "\n", lib,
			       size);
			ASSERT_EQ((int)probe_patched(lib, copy, size, l.co_firstlineno + 4),
				  (int)PY_MISS_CHECK, "tp_members' co_firstlineno moved");
		}
		if (l.minor < 13)
			continue;
		ASSERT_EQ((int)probe_patched(lib, copy, l.runtime + 72, l.interp_threads_head + 8),
			  (int)PY_MISS_CHECK, "_Py_DebugOffsets' threads_head moved");
		ASSERT_EQ((int)probe_patched(lib, copy, l.runtime + 360, 16), (int)PY_MISS_CHECK,
			  "_Py_DebugOffsets' ob_type moved");
		ASSERT_EQ((int)probe_patched(lib, copy, l.runtime + 16, 1), (int)PY_MISS_VERSION,
			  "free-threaded");
		ASSERT_EQ((int)probe_patched(lib, copy, l.runtime, 0), (int)PY_MISS_CHECK, "no cookie");
	}
	rmdir(dir);
	if (!done)
		test__skip("no CPython 3.11-3.13 installed");
}

int main(void)
{
	RUN_TEST(test_probe_installed);
	RUN_TEST(test_probe_misses);
	RUN_TEST(test_probe_tampered);
	return TEST_EXIT();
}
