/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ELF fixtures the elfsym tests share: one C source compiled at test
 * time into each kind of ELF file (PIE, non-PIE, static, shared, stripped,
 * ET_REL, 32-bit, odd build-ids), built on first use in a temp directory.
 * Included by test_elfsym.c (oracles) and test_elfsym_hostile.c.
 */
#ifndef BPFSYM_ELFSYM_FIXTURE_H
#define BPFSYM_ELFSYM_FIXTURE_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/elf/elfsym.h"
#include "test.h"

/*
 * No #include, so it also links with -m32 -nostdlib.  Alias groups check
 * the tie-break (global > weak > local, then shortest, then byte order);
 * the asm block makes a nested pair, a size-0 function, a NOTYPE label and
 * two aliases of different sizes.
 */
static const char fx_src[] =
"#define NI __attribute__((noinline, used))\n"
"typedef int fx_fn(int);\n"
"static int NI fx_static_one(int x) { return x * 3 + 1; }\n"
"static int NI fx_static_two(int x) { int s = 0; for (int i = 0; i < x; i++) s += i ^ fx_static_one(i); return s; }\n"
"int NI fx_global_alpha(int x) { return fx_static_two(x) + 2; }\n"
"int NI fx_global_beta(int x) { int s = 1; for (int i = 1; i < x; i++) s = s * 7 + fx_global_alpha(i); return s; }\n"
"__attribute__((weak)) int NI fx_weak_gamma(int x) { return x - 9 + fx_global_beta(x); }\n"
"int NI fx_target_long_name(int x) { return x ^ 0x5a; }\n"
"extern int fx_g(int) __attribute__((alias(\"fx_target_long_name\")));\n"
"extern int fx_a(int) __attribute__((weak, alias(\"fx_target_long_name\")));\n"
"static int fx_l(int) __attribute__((alias(\"fx_target_long_name\"), used));\n"
"int NI fx_same_b(int x) { return x + 0x77; }\n"
"extern int fx_same_a(int) __attribute__((alias(\"fx_same_b\")));\n"
"__attribute__((weak)) int NI fx_weak_long(int x) { return x * 5; }\n"
"static int fx_s(int) __attribute__((alias(\"fx_weak_long\"), used));\n"
"static int NI fx_ifunc_impl(int x) { return x + 7; }\n"
"static fx_fn *NI fx_ifunc_resolver(void) { return fx_ifunc_impl; }\n"
"int fx_ifunc(int) __attribute__((ifunc(\"fx_ifunc_resolver\")));\n"
"__asm__(\".text\\n.p2align 4\\n\"\n"
"\t\".globl fx_outer\\n.type fx_outer, @function\\nfx_outer:\\n.fill 16, 1, 0x90\\n\"\n"
"\t\".globl fx_inner\\n.type fx_inner, @function\\nfx_inner:\\n.fill 16, 1, 0x90\\n\"\n"
"\t\".size fx_inner, . - fx_inner\\n.fill 15, 1, 0x90\\nret\\n.size fx_outer, . - fx_outer\\n\"\n"
"\t\".globl fx_zero\\n.type fx_zero, @function\\nfx_zero:\\n.fill 8, 1, 0x90\\n\"\n"
"\t\".globl fx_notype\\nfx_notype:\\n.fill 8, 1, 0x90\\n\"\n"
"\t\".globl fx_after\\n.type fx_after, @function\\nfx_after:\\nret\\n.size fx_after, . - fx_after\\n\"\n"
"\t\".p2align 4\\n.globl fx_sz\\n.type fx_sz, @function\\n.size fx_sz, 4\\n\"\n"
"\t\".globl fx_sz_long_alias\\n.type fx_sz_long_alias, @function\\nfx_sz:\\nfx_sz_long_alias:\\n\"\n"
"\t\".fill 15, 1, 0x90\\nret\\n.size fx_sz_long_alias, 16\\n\");\n"
"#ifndef FX_NO_MAIN\n"
"int main(int argc, char **argv) { (void)argv; return fx_weak_gamma(argc) + fx_g(argc) + fx_a(argc)\n"
"\t+ fx_same_a(argc) + fx_weak_long(argc) + fx_ifunc(argc); }\n"
"#endif\n"
"#ifdef FX_NOTE8\n"
"__asm__(\".section .note.fx, \\\"a\\\", @note\\n.p2align 3\\n\"\n"
"\t\".long 8, 8, 0x1234\\n.asciz \\\"Custom7\\\"\\n.long 0\\n.quad 0x1122334455667788\\n\"\n"
"\t\".long 4, 20, 3\\n.asciz \\\"GNU\\\"\\n\"\n"
"\t\".byte 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20\\n.p2align 3\\n.text\\n\");\n"
"#endif\n"
"#ifdef FX_START\n"
"void _start(void) { for (;;) ; }\n"
"#endif\n";

enum fx_id { FX_PIE, FX_NOPIE, FX_STATIC, FX_SO, FX_SO_STRIPPED, FX_NOBID, FX_LONGBID,
	     FX_REL, FX_REL_SECS, FX_32, FX_NOTE8, FX_NR };

static const struct fixture {
	const char *file, *cmd;
} fixtures[FX_NR] = {
	[FX_PIE]	 = { "pie", "cc -O1 -fPIE -pie -Wl,--build-id=sha1 -o pie fx.c" },
	[FX_NOPIE]	 = { "nopie", "cc -O1 -fno-pie -no-pie -Wl,--build-id=sha1 -o nopie fx.c" },
	[FX_STATIC]	 = { "static", "cc -O1 -static -Wl,--build-id=sha1 -o static fx.c" },
	[FX_SO]		 = { "libfx.so", "cc -O1 -shared -fPIC -DFX_NO_MAIN -Wl,--build-id=sha1 -o libfx.so fx.c" },
	[FX_SO_STRIPPED] = { "libfx-stripped.so", "cc -O1 -shared -fPIC -DFX_NO_MAIN -Wl,--build-id=sha1 "
			     "-o libfx-stripped.so fx.c && strip --strip-all libfx-stripped.so" },
	[FX_NOBID]	 = { "nobid", "cc -O1 -Wl,--build-id=none -o nobid fx.c" },
	/* 100 bytes: the linker accepts it, elfsym must not (cap 64). */
	[FX_LONGBID]	 = { "longbid", "cc -O1 -Wl,--build-id=0x$(printf 'ab%.0s' $(seq 100)) -o longbid fx.c" },
	[FX_REL]	 = { "fx.o", "cc -O1 -c -DFX_NO_MAIN -o fx.o fx.c" },
	/* One section per C function (.text.NAME), the asm ones in .text. */
	[FX_REL_SECS]	 = { "fx_secs.o", "cc -O1 -c -ffunction-sections -DFX_NO_MAIN -o fx_secs.o fx.c" },
	[FX_32]		 = { "exe32", "cc -m32 -O1 -nostdlib -static -no-pie -DFX_START -Wl,--build-id=sha1 -o exe32 fx.c" },
	/* Its only build-id is a hand-made 8-byte aligned note (bytes 1..20). */
	[FX_NOTE8]	 = { "note8", "cc -O1 -DFX_NOTE8 -Wl,--build-id=none -o note8 fx.c" },
};

static int fx_built[FX_NR];	/* 0: not tried, 1: built, -1: failed */
static char tmpdir[PATH_MAX];
static int tmp_state;		/* 0: not tried, 1: ready, -1: failed */
static bool keep_tmp;

static void path_in_tmp(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", tmpdir, name);
}

static bool have_tool(const char *tool)
{
	return test__have(tool);
}

/*
 * Make the temp dir and write fx.c, once; false if not: a SKIP when a tool
 * is missing, a FAIL when the directory or fx.c cannot be made.
 */
static bool setup(void)
{
	static const char *tools[] = { "cc", "nm", "readelf", "strip" };
	const char *base = getenv("BPFSYM_TEST_TMP");
	static char why[PATH_MAX + 64];
	static bool failed;
	char path[PATH_MAX + 16];
	size_t i;
	FILE *f;

	if (tmp_state > 0)
		return true;
	if (tmp_state < 0)
		goto out;
	tmp_state = -1;
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (!have_tool(tools[i])) {
			snprintf(why, sizeof(why), "'%s' not found", tools[i]);
			goto out;
		}
	}
	failed = true;
	if (!base || !*base || strchr(base, '\''))
		base = "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/elfsym.XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		snprintf(why, sizeof(why), "mkdtemp in '%s': %s", base, strerror(errno));
		goto out;
	}
	tmp_state = 1;
	path_in_tmp(path, sizeof(path), "fx.c");
	f = fopen(path, "w");
	if (!f || fputs(fx_src, f) == EOF || fclose(f)) {
		tmp_state = -1;
		snprintf(why, sizeof(why), "cannot write '%s'", path);
		goto out;
	}
	return true;
out:
	if (failed)
		test__fail_msg(__FILE__, __LINE__, "%s", why);
	else
		test__skip("%s", why);
	return false;
}

/*
 * The path of fixture @id, built on first use; NULL if it cannot be (a FAIL
 * with cc's error when the tools are there, else setup()'s SKIP).
 */
static const char *fixture(enum fx_id id, char *buf, size_t sz)
{
	const struct fixture *fx = &fixtures[id];
	char cmd[1024];

	if (!setup())
		return NULL;
	if (!fx_built[id]) {
		fx_built[id] = -1;
		if (snprintf(cmd, sizeof(cmd), "cd '%s' && (%s) >>build.log 2>&1",
			     tmpdir, fx->cmd) < (int)sizeof(cmd) && system(cmd) == 0)
			fx_built[id] = 1;
	}
	if (fx_built[id] < 0) {
		char log[PATH_MAX + 16];

		keep_tmp = true;
		path_in_tmp(log, sizeof(log), "build.log");
		FAIL_BUILD(log, fx->file);
		return NULL;
	}
	path_in_tmp(buf, sz, fx->file);
	return buf;
}

static __attribute__((unused)) bool lookup_is(const struct elfsym *es, uint64_t a, const char *want, const char *what)
{
	const struct elfsym_sym *s = elfsym__lookup(es, a);

	return ASSERT_STREQ(s ? s->name : NULL, want, what);
}

/* Remove the fixtures' directory, unless a test failed or a fixture did not build. */
static void fixtures_cleanup(void)
{
	char cmd[PATH_MAX + 32];

	if (tmp_state <= 0)
		return;
	if (test__nr_fail || keep_tmp) {
		printf("     fixtures kept in %s\n", tmpdir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
	if (system(cmd))
		printf("     could not remove %s\n", tmpdir);
}

#endif /* BPFSYM_ELFSYM_FIXTURE_H */
