// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym against readelf: a file offset to an address and back through
 * each PT_LOAD (readelf -lW), the ELF type, and the build-id (readelf -n).
 * The symbols themselves are test_elfsym's.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elf/elfsym.h"
#include "base/util.h"
#include "test.h"
#include "elfsym_fixture.h"
#include "readelf_oracle.h"

TEST_SUITE("elfsym_layout")

/* ---- pgoff arithmetic against readelf -lW ---- */

static void check_pgoff(enum fx_id id)
{
	struct oload loads[32];
	uint64_t got, max_off = 0, max_va = 0;
	char path[PATH_MAX], what[128];
	const struct oload *want;
	struct elfsym *es;
	size_t n, i, k;
	bool exec = false;

	if (!fixture(id, path, sizeof(path)))
		return;
	n = read_loads(path, loads, 32);
	if (!ASSERT_TRUE(n >= 1, "readelf found PT_LOADs") || !(es = open_ok(path)))
		return;
	for (i = 0; i < n; i++) {
		const struct oload *L = &loads[i];
		uint64_t offs[3] = { L->off, L->off + L->filesz / 2, L->off + L->filesz - 1 };

		if (!L->filesz)
			continue;
		exec |= L->exec;
		if (L->exec && id == FX_NOPIE)
			ASSERT_NEQ(L->off, L->vaddr, "non-PIE text: p_offset != p_vaddr");
		if (L->off + L->filesz > max_off)
			max_off = L->off + L->filesz;
		if (L->vaddr + L->filesz > max_va)
			max_va = L->vaddr + L->filesz;
		for (k = 0; k < 3; k++) {
			want = load_of(loads, n, offs[k], true);
			snprintf(what, sizeof(what), "%s: offset 0x%llx", fixtures[id].file,
				 (unsigned long long)offs[k]);
			if (ASSERT_OK(elfsym__offset_to_vaddr(es, offs[k], &got), what))
				ASSERT_EQ(got, offs[k] - want->off + want->vaddr, what);
			want = load_of(loads, n, L->vaddr + (offs[k] - L->off), false);
			if (ASSERT_OK(elfsym__vaddr_to_offset(es, L->vaddr + (offs[k] - L->off), &got), what))
				ASSERT_EQ(got, L->vaddr + (offs[k] - L->off) - want->vaddr + want->off, what);
		}
		/* The byte after a segment, when no other segment holds it. */
		if (!load_of(loads, n, L->off + L->filesz, true))
			ASSERT_EQ(elfsym__offset_to_vaddr(es, L->off + L->filesz, &got), -ENOENT,
				  "offset just past a PT_LOAD");
	}
	ASSERT_TRUE(exec, "an executable PT_LOAD");
	ASSERT_EQ(elfsym__offset_to_vaddr(es, max_off, &got), -ENOENT, "offset past every PT_LOAD");
	ASSERT_EQ(elfsym__offset_to_vaddr(es, UINT64_MAX, &got), -ENOENT, "offset 2^64-1");
	ASSERT_EQ(elfsym__vaddr_to_offset(es, max_va, &got), -ENOENT, "vaddr past every PT_LOAD");
	if (id == FX_NOPIE)
		ASSERT_EQ(elfsym__vaddr_to_offset(es, 0, &got), -ENOENT, "vaddr 0 of a non-PIE");
	elfsym__free(es);
}

static void test_pgoff_pie(void) { check_pgoff(FX_PIE); }
static void test_pgoff_nopie(void) { check_pgoff(FX_NOPIE); }
static void test_pgoff_static(void) { check_pgoff(FX_STATIC); }
static void test_pgoff_so(void) { check_pgoff(FX_SO); }
static void test_pgoff_elf32(void) { check_pgoff(FX_32); }

static void test_types(void)
{
	static const struct { enum fx_id id; int type; } cases[] = {
		{ FX_PIE, ET_DYN }, { FX_NOPIE, ET_EXEC }, { FX_STATIC, ET_EXEC },
		{ FX_SO, ET_DYN }, { FX_REL, ET_REL }, { FX_32, ET_EXEC },
	};
	char path[PATH_MAX];
	struct elfsym *es;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!fixture(cases[i].id, path, sizeof(path)) || !(es = open_ok(path)))
			return;
		ASSERT_EQ(elfsym__type(es), cases[i].type, path);
		elfsym__free(es);
	}
}

/* ---- build-id against readelf -n ---- */

static size_t readelf_build_id(const char *path, uint8_t *out, size_t max)
{
	struct lines l;
	size_t i, n = 0;
	const char *p;
	unsigned int b;

	run_lines(&l, "readelf -n '%s'", path);
	for (i = 0; i < l.n && !n; i++) {
		p = strstr(l.v[i], "Build ID: ");
		if (!p)
			continue;
		for (p += 10; n < max && sscanf(p, "%2x", &b) == 1; p += 2)
			out[n++] = (uint8_t)b;
	}
	lines_free(&l);
	return n;
}

static void test_build_id(void)
{
	static const enum fx_id ids[] = { FX_PIE, FX_NOPIE, FX_STATIC, FX_SO, FX_SO_STRIPPED, FX_32 };
	uint8_t want[256];
	char path[PATH_MAX];
	const uint8_t *got;
	struct elfsym *es;
	size_t i, n, len;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (!fixture(ids[i], path, sizeof(path)) || !(es = open_ok(path)))
			return;
		n = readelf_build_id(path, want, sizeof(want));
		got = elfsym__build_id(es, &len);
		if (ASSERT_EQ(n, (size_t)20, "readelf: sha1 build-id") &&
		    ASSERT_EQ(len, n, path) && ASSERT_OK_PTR(got, path))
			ASSERT_TRUE(!memcmp(got, want, n), "build-id bytes equal readelf's");
		elfsym__free(es);
	}

	/* 8-byte note alignment pads from the note's start, not per field. */
	if (!fixture(FX_NOTE8, path, sizeof(path)) || !(es = open_ok(path)))
		return;
	n = readelf_build_id(path, want, sizeof(want));
	got = elfsym__build_id(es, &len);
	if (ASSERT_EQ(n, (size_t)20, "readelf: the hand-made build-id") &&
	    ASSERT_EQ(want[0] + want[19], 1 + 20, "readelf: bytes 1..20") &&
	    ASSERT_EQ(len, n, "8-aligned build-id") && ASSERT_OK_PTR(got, "8-aligned build-id"))
		ASSERT_TRUE(!memcmp(got, want, n), "build-id bytes equal readelf's");
	elfsym__free(es);

	if (!fixture(FX_NOBID, path, sizeof(path)) || !(es = open_ok(path)))
		return;
	ASSERT_EQ(readelf_build_id(path, want, sizeof(want)), (size_t)0, "readelf: no build-id");
	ASSERT_NULL(elfsym__build_id(es, &len), "--build-id=none");
	ASSERT_EQ(len, (size_t)0, "--build-id=none: length");
	elfsym__free(es);

	if (!fixture(FX_LONGBID, path, sizeof(path)) || !(es = open_ok(path)))
		return;
	ASSERT_EQ(readelf_build_id(path, want, sizeof(want)), (size_t)100, "readelf: 100-byte build-id");
	ASSERT_NULL(elfsym__build_id(es, &len), "a 100-byte build-id is over the 64-byte cap");
	ASSERT_EQ(len, (size_t)0, "overlong build-id: length");
	elfsym__free(es);
}

/* ---- lifetime and non-ELF input ---- */

int main(void)
{
	if (getenv("BPFSYM_DEBUG"))
		log_set_level(LOG_DEBUG);
	RUN_TEST(test_pgoff_pie);
	RUN_TEST(test_pgoff_nopie);
	RUN_TEST(test_pgoff_static);
	RUN_TEST(test_pgoff_so);
	RUN_TEST(test_pgoff_elf32);
	RUN_TEST(test_types);
	RUN_TEST(test_build_id);
	fixtures_cleanup();
	return TEST_EXIT();
}
