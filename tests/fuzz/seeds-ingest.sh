#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-ingest.sh DIR: seed inputs for fuzz_ingest, each a list of
# ring-buffer records (a little-endian u16 length, then the record), made
# by a small C program built here with $CC against include/bpfsym.h, as
# the BPF side lays them out: a process forked, exec'd, mapping files,
# anonymous and special memory, sampled with kernel and user frames
# (watched pids among them), unmapped, resynced and exited; the same
# with a late MAP after the EXIT, samples cut short, and records of
# unknown types and wrong sizes; samples whose user side holds Python
# frames (two slots each, include/bpfsym.h) among native ones, and
# malformed ones: a reserved kind, a Python frame missing its second
# slot, a side full of Python pairs and one slot over.
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
CC=${CC:-cc}
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$d" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/bpfsym-ingseeds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

cat > "$work/gen.c" <<'SRC'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "bpfsym.h"

static FILE *out;

/* One record of @len bytes (what the ring buffer hands over), its size field @size. */
static void put(void *rec, size_t len, size_t size)
{
	unsigned char l[2] = { (unsigned char)len, (unsigned char)(len >> 8) };

	((struct bpfsym_ev_hdr *)rec)->size = (__u16)size;
	fwrite(l, 1, 2, out);
	fwrite(rec, 1, len, out);
}

static void task(__u16 type, __u32 pid, __u32 ppid, __u64 ts)
{
	struct bpfsym_task_ev t = { .hdr = { .type = type, .cpu = 1, .ts = ts },
				    .pid = pid, .ppid = ppid, .pstart = pid + 1000,
				    .ppstart = ppid ? ppid + 1000 : 0 };

	put(&t, sizeof(t), sizeof(t));
}

static void map(__u32 pid, __u64 start, __u64 end, const char *path, __u32 flags, __u64 ts)
{
	struct bpfsym_map_ev e = { .hdr = { .type = BPFSYM_EV_MAP, .ts = ts },
				   .pid = pid, .tid = pid, .pstart = pid + 1000,
				   .start = start, .end = end, .pgoff = 0x1000, .dev = (8u << 20) | 1,
				   .ino = 1234, .prot = PROT_READ | PROT_EXEC, .flags = flags,
				   .cause = BPFSYM_MAP_EXEC, .mnt_ns = 4026531841u };
	size_t n;

	e.path_len = (__u16)snprintf(e.path, sizeof(e.path), "%s", path);
	n = (BPFSYM_MAP_EV_HDR_SIZE + e.path_len + 1 + 7) & ~(size_t)7;
	put(&e, n, n);
}

static void unmap(__u32 pid, __u64 start, __u64 end, __u64 ts)
{
	struct bpfsym_unmap_ev u = { .hdr = { .type = BPFSYM_EV_UNMAP, .ts = ts },
				     .pid = pid, .tid = pid, .pstart = pid + 1000, .start = start, .end = end };

	put(&u, sizeof(u), sizeof(u));
}

/* A sample of @pid with @nk kernel and @nu user frames; @cut bytes fewer than it needs. */
static void sample(__u32 pid, __u16 nk, __u16 nu, __u64 cg, __u64 ts, size_t cut)
{
	struct bpfsym_sample s = { .hdr = { .type = BPFSYM_EV_SAMPLE, .cpu = 2, .ts = ts },
				   .pid = pid, .tid = pid + 1, .pstart = pid + 1000, .cgroup_id = cg,
				   .nr_kernel = nk, .nr_user = nu, .flags = 1u << BPFSYM_SF_UEND_SHIFT };
	size_t i, n = BPFSYM_SAMPLE_HDR_SIZE + (size_t)(nk + nu) * 8;

	memcpy(s.comm, "fuzz-ingest-comm", BPFSYM_COMM_LEN);
	for (i = 0; i < nk; i++)
		s.ips[i] = 0xffffffff81000100ull + i * 0x80;
	for (i = 0; i < nu; i++)
		s.ips[nk + i] = 0x7f0000001000ull + i * 0x40;
	put(&s, n - cut, n - cut);
}

/*
 * A sample of @pid whose @nu user slots are @slots (native addresses and
 * Python pairs as the BPF walker writes them), after one kernel frame.
 */
static void sample_slots(__u32 pid, const __u64 *slots, __u16 nu, __u64 ts)
{
	struct bpfsym_sample s = { .hdr = { .type = BPFSYM_EV_SAMPLE, .cpu = 3, .ts = ts },
				   .pid = pid, .tid = pid, .pstart = pid + 1000,
				   .nr_kernel = 1, .nr_user = nu };
	size_t n = BPFSYM_SAMPLE_HDR_SIZE + (size_t)(1 + nu) * 8;

	memcpy(s.comm, "python3", 8);
	s.ips[0] = 0xffffffff81000100ull;
	memcpy(&s.ips[1], slots, nu * sizeof(*slots));
	put(&s, n, n);
}

/* Python interleaved with native code, then the malformed sides. */
static void interp(void)
{
	__u64 v[BPFSYM_MAX_FRAMES];
	__u16 i;

	v[0] = 0x7f0000001040ull;				/* a C function */
	v[1] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x7f1200000010ull);	/* named, with a file */
	v[2] = bpfsym_fk_py_slot1(10, 6);
	v[3] = 0x7f0000001100ull;				/* the eval loop */
	v[4] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x7f1200000005ull);	/* a miss */
	v[5] = bpfsym_fk_py_slot1(3, 0);
	v[6] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x7f1200000002ull);	/* never answers */
	v[7] = bpfsym_fk_py_slot1(40, 2);
	v[8] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x7f120000000full);	/* breaks the contract */
	v[9] = bpfsym_fk_py_slot1(1, 1);
	sample_slots(4343, v, 10, 7000);
	sample_slots(4343, v, 3, 7001);
	v[3] = 9ull << BPFSYM_FK_SHIFT | 0x1234;		/* a reserved kind */
	sample_slots(4343, v, 10, 7002);
	sample_slots(4343, v, 2, 7003);				/* a pair cut in two */
	for (i = 0; i + 1 < BPFSYM_MAX_FRAMES; i += 2) {
		v[i] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x7f1200000010ull + 0x20 * i);
		v[i + 1] = bpfsym_fk_py_slot1(i, i);
	}
	v[BPFSYM_MAX_FRAMES - 1] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, 0x7f1200000030ull);
	sample_slots(4343, v, BPFSYM_MAX_FRAMES, 7004);		/* 63 pairs and one slot over */
}

/* An off-CPU stack record of @pid under @key in @state, @nk + @nu frames (BPF's, bpf/offcpu.bpf.h). */
static void offstack(__u32 pid, __u64 key, __u32 state, __u16 nk, __u16 nu, __u64 ts)
{
	struct bpfsym_sample s = { .hdr = { .type = BPFSYM_EV_OFFCPU_STACK, .cpu = 1, .ts = ts },
				   .pid = pid, .tid = pid + 2, .pstart = pid + 1000,
				   .nr_kernel = nk, .nr_user = nu, .flags = state << BPFSYM_SF_STATE_SHIFT,
				   .aux = key };
	size_t i, n = BPFSYM_SAMPLE_HDR_SIZE + (size_t)(nk + nu) * 8;

	memcpy(s.comm, "fuzz-offcpu", 12);
	for (i = 0; i < nk; i++)
		s.ips[i] = 0xffffffff81000200ull + i * 0x40;
	for (i = 0; i < nu; i++)
		s.ips[nk + i] = 0x7f0000001000ull + i * 0x40;
	put(&s, n, n);
}

static FILE *seed(const char *dir, const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return fopen(p, "w");
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	/* A process's life, a watched pid (4242) among them. */
	out = seed(argv[1], "life");
	task(BPFSYM_EV_FORK, 4242, 1, 10);
	task(BPFSYM_EV_EXEC, 4242, 0, 20);
	map(4242, 0x7f0000000000ull, 0x7f0000010000ull, "/usr/lib/libc.so.6", 0, 30);
	map(4242, 0x7f0000100000ull, 0x7f0000101000ull, "", BPFSYM_MF_ANON, 31);
	map(4242, 0x7ffd00000000ull, 0x7ffd00002000ull, "[vdso]", BPFSYM_MF_SPECIAL, 32);
	sample(4242, 2, 3, 0, 2000, 0);
	sample(4242, 0, 1, 12345, 3000, 0);
	unmap(4242, 0x7f0000000000ull, 0x7f0000008000ull, 40);
	task(BPFSYM_EV_RESYNC, 4242, 0, 50);
	map(4242, 0x7f0000000000ull, 0x7f0000010000ull, "/usr/lib/libc.so.6", BPFSYM_MF_VIEWED, 51);
	sample(4242, 1, 1, 0, 4000, 0);
	task(BPFSYM_EV_EXIT, 4242, 0, 60);
	sample(4242, 1, 1, 0, 61, 0);
	fclose(out);
	/* Off-CPU stacks: each state, a key sent twice, key 0, the frame caps. */
	out = seed(argv[1], "offcpu");
	task(BPFSYM_EV_EXEC, 4444, 0, 10);
	map(4444, 0x7f0000000000ull, 0x7f0000010000ull, "/usr/lib/libc.so.6", 0, 11);
	offstack(4444, 0x1111, BPFSYM_OS_SLEEP, 2, 3, 100);
	offstack(4444, 0x2222, BPFSYM_OS_DISK, 1, 1, 101);
	offstack(4444, 0x3333, BPFSYM_OS_PREEMPT, 0, 2, 102);
	offstack(4444, 0x1111, BPFSYM_OS_OTHER, 2, 3, 103);
	offstack(4444, 0, BPFSYM_OS_SLEEP, 1, 1, 104);
	offstack(4444, 0x4444, BPFSYM_OS_SLEEP, BPFSYM_MAX_FRAMES, BPFSYM_MAX_FRAMES, 105);
	sample(4444, 1, 1, 0, 106, 0);
	fclose(out);
	/* A MAP after the EXIT, samples past the grace, forks from an unknown parent. */
	out = seed(argv[1], "late");
	task(BPFSYM_EV_EXIT, 7, 0, 100);
	map(7, 0x400000, 0x401000, "/bin/true", 0, 101);
	sample(7, 0, 2, 0, 102, 0);
	task(BPFSYM_EV_FORK, 8, 99, 103);
	sample(7, 0, 2, 0, 10000000000ull, 0);
	sample(1, BPFSYM_MAX_FRAMES, BPFSYM_MAX_FRAMES, 0, 10000000001ull, 0);
	fclose(out);
	/* Malformed: cut samples, short and unknown records, a size past the record. */
	out = seed(argv[1], "bad");
	sample(9, 1, 1, 0, 5, 8);
	sample(9, 0, 0, 0, 6, 30);
	{
		struct bpfsym_task_ev t = { .hdr = { .type = 99, .ts = 7 }, .pid = 9 };

		put(&t, sizeof(t), sizeof(t));
		t.hdr.type = BPFSYM_EV_EXIT;
		put(&t, sizeof(t) - 4, sizeof(t) - 4);
		put(&t, sizeof(t), sizeof(t) + 8);
		put(&t, sizeof(t.hdr), sizeof(t.hdr));
	}
	map(9, 0x2000, 0x1000, "/backwards", 0, 8);
	unmap(9, 0x2000, 0x1000, 9);
	fclose(out);
	/* Interpreter frames, well and badly formed. */
	out = seed(argv[1], "interp");
	task(BPFSYM_EV_EXEC, 4343, 0, 6000);
	map(4343, 0x7f0000000000ull, 0x7f0000010000ull, "/usr/bin/python3.11", 0, 6001);
	interp();
	task(BPFSYM_EV_EXIT, 4343, 0, 6002);
	fclose(out);
	return 0;
}
SRC
if ! $CC -O1 -I"$top/include" -o "$work/gen" "$work/gen.c" > "$work/log" 2>&1 || ! "$work/gen" "$d" >> "$work/log" 2>&1; then
	echo "make-corpus: ingest seeds left out: $(tail -n 1 "$work/log")" >&2
fi
exit 0
