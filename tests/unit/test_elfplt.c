// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfplt: every PLT stub objdump labels "<name@plt>:" is named the same by
 * elfsym, at its first and last byte.  objdump finds each stub's function
 * by decoding its jump (binutils' synthetic symbols), so it is an oracle
 * independent of the relocation order.  An IRELATIVE stub, which objdump
 * calls "*ABS*+0xADDR@plt", must be named after the IFUNC at ADDR.
 * .plt.got's stubs, which objdump labels too, are named from .rela.dyn,
 * and PLT0, "<x@plt-0x10>" (or "<.plt>") to objdump, ".plt" as perf
 * names it.  Fixtures: lazy .plt, -z now, IBT's .plt.sec, a shared object, libc.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/elf/elfsym.h"
#include "test.h"

TEST_SUITE("elfplt");

static char dir[PATH_MAX];

static const char src[] =
"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
"int main(int argc, char **argv) {\n"
"\tchar *p = malloc(64); strcpy(p, argv[0]);\n"
"\tprintf(\"%zu %ld\\n\", strlen(p), (long)time(NULL) + argc);\n"
"\tfree(p); return memcmp(argv[0], \"x\", 1) > 0;\n}\n";

/* Build @out from the source with @flags; false (a FAIL, SKIP without cc) when it cannot. */
static bool build(const char *out, const char *flags)
{
	char cmd[PATH_MAX * 4 + 128], log[PATH_MAX + 16];
	FILE *f;

	if (!test__have("cc")) {
		test__skip("'cc' not found");
		return false;
	}
	snprintf(cmd, sizeof(cmd), "%s/plt.c", dir);
	f = fopen(cmd, "w");
	if (!f || fputs(src, f) < 0 || fclose(f)) {
		test__fail_msg(__FILE__, __LINE__, "cannot write %s", cmd);
		return false;
	}
	snprintf(log, sizeof(log), "%s/%s.build.log", dir, out);
	snprintf(cmd, sizeof(cmd), "cc -O1 %s -o '%s/%s' '%s/plt.c' > '%s' 2>&1", flags, dir, out, dir, log);
	if (system(cmd) == 0)
		return true;
	FAIL_BUILD(log, out);
	return false;
}

/* What check() compared: stubs, of them in .plt.got, and PLT0 headers. */
struct checked {
	size_t stubs, got, header;
};

/* Whether elfsym names address @addr @want; the name it gives into @at (@len bytes), for a message. */
static bool named(struct elfsym *es, unsigned long long addr, const char *want, char *at, size_t len)
{
	const struct elfsym_sym *sym = elfsym__lookup(es, addr);

	snprintf(at, len, "%s", sym ? sym->name : "(none)");
	return sym && !strcmp(sym->name, want);
}

/*
 * Compare every objdump PLT label of @path with elfsym, at the stub's
 * first and last byte (16-byte stubs; .plt.got's are 8 or 16: its 8th),
 * and PLT0, "<x@plt-0x10>" to objdump, ".plt" as perf names it.
 */
static struct checked check(const char *path)
{
	char cmd[PATH_MAX + 128], line[1024], want[512], got_at[512], sect[64] = "";
	unsigned long long addr, abs_addr;
	const struct elfsym_sym *sym, *ifunc;
	struct elfsym *es = elfsym__open(path, NULL);
	struct checked c = { 0 };
	size_t bad = 0, len;
	FILE *fp;

	if (!ASSERT_OK_PTR(es, path))
		return c;
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	fp = popen(cmd, "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned last;

		if (sscanf(line, "Disassembly of section %63[^:]:", sect) == 1)
			continue;
		if (sscanf(line, "%llx <%511[^>]>:", &addr, want) != 2)
			continue;
		len = strlen(want);
		/*
		 * "<x@plt-0x10>" is the resolver's entry, PLT0 (objdump calls it
		 * "<.plt>" when the stubs are in .plt.sec): ".plt".
		 */
		if (!strcmp(sect, ".plt") && (!strcmp(want, ".plt") ||
					      (len > 9 && !strcmp(want + len - 9, "@plt-0x10")))) {
			c.header++;
			for (int k = 0; k < 2; k++) {
				if (named(es, addr + (k ? 15 : 0), ".plt", got_at, sizeof(got_at)))
					continue;
				if (bad++ < 5)
					test__fail_msg(__FILE__, __LINE__, "%s: PLT0 0x%llx%s: elfsym says %s, not .plt",
						       path, addr, k ? "+15" : "", got_at);
			}
			continue;
		}
		if (len < 5 || strcmp(want + len - 4, "@plt"))
			continue;
		c.stubs++;
		last = 15;
		if (!strcmp(sect, ".plt.got")) {
			c.got++;
			last = 7;
		}
		for (int k = 0; k < 2; k++) {
			if (named(es, addr + (k ? last : 0), want, got_at, sizeof(got_at)))
				continue;
			sym = elfsym__lookup(es, addr + (k ? last : 0));
			/* IRELATIVE: objdump has no name; we name the IFUNC at its resolver. */
			if (sym && sscanf(want, "*ABS*+0x%llx@plt", &abs_addr) == 1 &&
			    (ifunc = elfsym__lookup(es, abs_addr)) && ifunc->addr == abs_addr &&
			    !strncmp(sym->name, ifunc->name, strlen(ifunc->name)) &&
			    !strcmp(sym->name + strlen(ifunc->name), "@plt"))
				continue;
			if (bad++ < 5)
				test__fail_msg(__FILE__, __LINE__, "%s: 0x%llx+%u (%s): objdump says %s, elfsym %s",
					       path, addr, k ? last : 0, sect, want, got_at);
		}
	}
	if (fp)
		pclose(fp);
	elfsym__free(es);
	ASSERT_EQ(bad, (size_t)0, "stubs named otherwise than objdump names them");
	return c;
}

/* Build @name with @flags; at least @min stubs, with .plt.got's and PLT0 where @got. */
static void run(const char *name, const char *flags, size_t min, bool got)
{
	char path[PATH_MAX + 64];
	struct checked c;

	if (!build(name, flags))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	c = check(path);
	ASSERT_TRUE(c.stubs >= min, "objdump labels enough stubs");
	if (got) {
		/* crtstuff calls __cxa_finalize, also a data reference: .plt.got. */
		ASSERT_TRUE(c.got >= 1, "a .plt.got stub (__cxa_finalize) checked");
		ASSERT_EQ(c.header, (size_t)1, "PLT0 checked");
	}
	printf("     %s: %zu PLT stubs (%zu in .plt.got) and %zu PLT0 agree with objdump\n", name,
	       c.stubs, c.got, c.header);
}

static void test_lazy(void) { run("lazy", "-Wl,-z,lazy", 5, true); }
static void test_now(void) { run("now", "-Wl,-z,now", 5, false); }
static void test_ibt(void) { run("ibt", "-fcf-protection=full -Wl,-z,ibtplt", 5, true); }
static void test_shared(void) { run("lib.so", "-shared -fPIC -Dmain=lib_main", 5, true); }

static void test_libc(void)
{
	struct checked c = check("/usr/lib/x86_64-linux-gnu/libc.so.6");

	ASSERT_TRUE(c.stubs >= 10, "libc's PLT, with its IRELATIVE stubs");
	printf("     libc: %zu PLT stubs agree with objdump\n", c.stubs);
}

int main(void)
{
	const char *tmp = getenv("BPFSYM_TEST_TMP");

	snprintf(dir, sizeof(dir), "%s/test_elfplt.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		TEST_SETUP_FAIL("mkdtemp %s: %s", dir, strerror(errno));
		dir[0] = 0;
	}
#if !defined(__x86_64__)
	TEST_SETUP_SKIP("PLT stubs are synthesized on x86-64 only");
#endif
	RUN_TEST(test_lazy);
	RUN_TEST(test_now);
	RUN_TEST(test_ibt);
	RUN_TEST(test_shared);
	RUN_TEST(test_libc);
	if (dir[0]) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("     (could not remove %s)\n", dir);
	}
	return TEST_EXIT();
}
