#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-jitdump.sh DIR: seed inputs for fuzz_jitdump.  A tiny writer, in C
# below, compiled with $CC (default cc) at build time, writes jitdump files:
# every record kind, MOVEs, code reused (overlapping loads), a header longer
# than 40 bytes, a byte-swapped (other-endian) file, another version, bogus
# sizes of each kind, a file cut inside a record, and a long name.
# Nothing binary is committed.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
CC=${CC:-cc}
mkdir -p "$d"
work=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-jdseeds.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat > "$work/gen.c" <<'SRC'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char buf[65536];
static size_t len;
static int swap;	/* write every field byte-swapped: another machine's file */

static void put(const void *p, size_t n)
{
	if (len + n > sizeof(buf))
		exit(1);
	if (p)
		memcpy(buf + len, p, n);
	else
		memset(buf + len, 0xcc, n);
	len += n;
}

static void p32(uint32_t v)
{
	if (swap)
		v = __builtin_bswap32(v);
	put(&v, 4);
}

static void p64(uint64_t v)
{
	if (swap)
		v = __builtin_bswap64(v);
	put(&v, 8);
}

static void header(uint32_t magic, uint32_t version, uint32_t total)
{
	p32(magic);
	p32(version);
	p32(total);
	p32(62);
	p32(0);
	p32(4242);
	p64(123456789);
	p64(0);
	for (; total > 40; total--)
		put("", 1);
}

static void rec(uint32_t id, uint32_t total)
{
	p32(id);
	p32(total);
	p64(1000 + len);
}

static void load(uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	size_t n = strlen(name) + 1;

	rec(0, (uint32_t)(16 + 40 + n + size));
	p32(4242);
	p32(4243);
	p64(addr);
	p64(addr);
	p64(size);
	p64(index);
	put(name, n);
	put(NULL, size);
}

static void move(uint64_t old, uint64_t new, uint64_t size, uint64_t index)
{
	rec(1, 16 + 48);
	p32(4242);
	p32(4243);
	p64(new);
	p64(old);
	p64(new);
	p64(size);
	p64(index);
}

static void debug_info(uint64_t addr)
{
	rec(2, 16 + 16 + 2 * (16 + 9));
	p64(addr);
	p64(2);
	for (int i = 0; i < 2; i++) {
		p64(addr + (uint64_t)i * 4);
		p32(10 + (uint32_t)i);
		p32(0);
		put("Foo.java", 9);
	}
}

static void unwinding_info(void)
{
	rec(4, 16 + 24 + 16);
	p64(16);
	p64(8);
	p64(16);
	put(NULL, 16);
}

static void raw(uint32_t id, uint32_t total, size_t body)
{
	rec(id, total);
	put(NULL, body);
}

static void save(const char *dir, const char *name, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f))
		exit(1);
	len = 0;
	swap = 0;
}

static void all_kinds(void)
{
	header(0x4A695444, 1, 40);
	load(0x7f0000001000, 0x40, 1, "Interpreter");
	debug_info(0x7f0000002000);
	load(0x7f0000002000, 0x60, 2, "LFoo;bar(I)V");
	unwinding_info();
	raw(42, 16 + 8, 8);
	load(0x7f0000003000, 0, 3, "placed_later");
	move(0, 0x7f0000004000, 0x20, 3);
	move(0x7f0000002000, 0x7f0000005000, 0x60, 2);
	raw(3, 16, 0);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char name[5000];
	size_t cut;
	int i;

	all_kinds();
	save(dir, "all_kinds", len);

	all_kinds();
	cut = len - 30;
	save(dir, "cut_in_a_record", cut);

	/* A JIT reusing its code area: loads over loads, moves between them. */
	header(0x4A695444, 1, 40);
	for (i = 0; i < 40; i++) {
		char n[32];

		snprintf(n, sizeof(n), "fn_%d", i);
		load(0x10000 + (uint64_t)(i * 37 % 16) * 0x40, 0x40 + (uint64_t)(i % 3) * 0x40, (uint64_t)i, n);
		if (i % 5 == 4)
			move(0, 0x20000 + (uint64_t)i * 0x10, 0x30, (uint64_t)(i - 2));
	}
	save(dir, "code_reuse", len);

	header(0x4A695444, 1, 64);
	load(0x1000, 0x10, 1, "after_a_64_byte_header");
	save(dir, "long_header", len);

	swap = 1;
	all_kinds();
	save(dir, "other_endian", len);

	header(0x4A695444, 2, 40);
	load(0x1000, 0x10, 1, "version_2");
	save(dir, "version_2", len);

	/* Bogus sizes, each after a good record. */
	header(0x4A695444, 1, 40);
	load(0x1000, 0x10, 1, "good");
	raw(0, 16, 0);			/* a LOAD with no body */
	raw(0, 16 + 41, 41);		/* no room for a name */
	raw(1, 16 + 47, 47);		/* a MOVE one byte short */
	load(0x2000, 0x10, 2, "");	/* empty name */
	load(UINT64_MAX - 8, 0x10, 3, "wraps");
	move(0, 0x3000, 0x10, 99);	/* an index never loaded */
	rec(0, 16 + 40 + 4);		/* a name without its NUL */
	p32(1); p32(1); p64(0x4000); p64(0x4000); p64(0); p64(4);
	put("nnnn", 4);
	rec(0, 16 + 40 + 4);		/* code_size past the record */
	p32(1); p32(1); p64(0x5000); p64(0x5000); p64(0x100); p64(5);
	put("abc", 4);
	load(0x6000, 0x10, 6, "good_again");
	raw(0, 15, 0);			/* total_size below 16: stop */
	load(0x7000, 0x10, 7, "never");
	save(dir, "bogus_sizes", len);

	header(0x4A695444, 1, 40);
	rec(0, 0xffffffffu);		/* a record of 4 GiB */
	put(NULL, 64);
	save(dir, "huge_record", len);

	memset(name, 'N', 4096);
	name[4096] = '\0';
	header(0x4A695444, 1, 40);
	load(0x1000, 0x10, 1, name);	/* 4096 bytes: the longest kept */
	name[4095] = '\0';
	load(0x2000, 0x10, 2, name);
	save(dir, "long_names", len);
	return 0;
}
SRC
"$CC" -O1 -o "$work/gen" "$work/gen.c"
"$work/gen" "$d"
