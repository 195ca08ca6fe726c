// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle: C++ and Rust names through libiberty, checked against what
 * c++filt prints for the same names (libiberty is c++filt's demangler: the
 * C++ strings below are c++filt's output; for Rust, c++filt runs verbose
 * and keeps the hash and crate disambiguator, which we drop as rustfilt
 * does), and the cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "test.h"

TEST_SUITE("demangle");

static void expect(const char *mangled, const char *want)
{
	char *got = demangle(mangled);

	if (!want) {
		ASSERT_NULL(got, mangled);
	} else if (ASSERT_OK_PTR(got, mangled)) {
		ASSERT_STREQ(got, want, mangled);
	}
	free(got);
}

static void test_cpp(void)
{
	expect("_ZN4llvm17MachineModuleInfoC1EOS0_", "llvm::MachineModuleInfo::MachineModuleInfo(llvm::MachineModuleInfo&&)");
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect("_Z3fooIiEvT_", "void foo<int>(int)");
	expect("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const");
}

static void test_rust(void)
{
	/* Legacy: the hash suffix is dropped, as rustfilt does. */
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	/* v0. */
	expect("_RNvCs15kBYyAo9fc_7mycrate4main", "mycrate::main");
}

static void test_not_mangled(void)
{
	expect("main", NULL);
	expect("_start", NULL);
	expect("_Z", NULL);
	expect("_Zgarbage!", NULL);
	expect("", NULL);
}

static void test_too_long(void)
{
	char *name = malloc(DEMANGLE_MAX_LEN + 2);

	if (!ASSERT_OK_PTR(name, "malloc"))
		return;
	/* _Z + N then many 1a sources: valid shape, far too long. */
	memset(name, 'a', DEMANGLE_MAX_LEN + 1);
	memcpy(name, "_Z3foo", 6);
	name[DEMANGLE_MAX_LEN + 1] = '\0';
	expect(name, NULL);
	free(name);
}

static bool intern(struct strtab *st, const char *s, uint32_t *id)
{
	return ASSERT_OK(strtab__intern_id(st, s, strlen(s), id), s);
}

static void test_cache(void)
{
	struct demangle_cache c = {};
	struct strtab st = {};
	uint32_t raw, plain, id;
	const char *a, *b;
	char buf[32];
	int i;

	if (!intern(&st, "_Z3fooIiEvT_", &raw) || !intern(&st, "main", &plain))
		goto out;
	a = demangle_cache__get(&c, &st, raw);
	b = demangle_cache__get(&c, &st, raw);
	if (ASSERT_OK_PTR(a, "get"))
		ASSERT_STREQ(a, "void foo<int>(int)", "demangled");
	ASSERT_TRUE(a == b, "the same string the second time");
	ASSERT_TRUE(demangle_cache__get(&c, &st, plain) == strtab__str(&st, plain), "a C name is itself");
	errno = 0;
	ASSERT_NULL(demangle_cache__get(&c, &st, 1u << 30), "no such string");
	ASSERT_EQ(errno, EINVAL, "EINVAL");
	/* Many names: the array grows and keeps every answer. */
	for (i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "_Z6fn%04dv", i);
		if (!intern(&st, buf, &id) || !ASSERT_OK_PTR(demangle_cache__get(&c, &st, id), buf))
			break;
	}
	ASSERT_TRUE(demangle_cache__get(&c, &st, raw) == a, "still cached after growth");
	if (intern(&st, "_Z6fn1234v", &id)) {
		a = demangle_cache__get(&c, &st, id);
		if (ASSERT_OK_PTR(a, "get"))
			ASSERT_STREQ(a, "fn1234()", "a later name");
	}
	ASSERT_TRUE(demangle__is_mangled("_ZN1a1bEv") && demangle__is_mangled("_RNvC1a1b") &&
		    !demangle__is_mangled("main") && !demangle__is_mangled("_"), "the prefixes");
out:
	demangle_cache__free(&c);
	strtab__free(&st);
}

int main(void)
{
	RUN_TEST(test_cpp);
	RUN_TEST(test_rust);
	RUN_TEST(test_not_mangled);
	RUN_TEST(test_too_long);
	RUN_TEST(test_cache);
	return TEST_EXIT();
}
