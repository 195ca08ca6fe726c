// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * aggregate OBJ MODE HZ SECONDS INTERVAL_MS ENTRIES: load program MODE
 * ("stream" or "count") of aggregate.bpf.o, attach it to a cpu-clock event
 * at HZ on every CPU, and get its samples out for SECONDS:
 *  - stream: drain the ring buffer every 100 ms (bpfsym record's pace with
 *    tables), counting records and bytes;
 *  - count: every INTERVAL_MS, take every (pid, stack ids) -> count entry
 *    out of the hash map (lookup-and-delete in batches), read each distinct
 *    stack once from the STACK_TRACE map and delete it there (so the map
 *    does not fill), as an aggregating agent must.  ENTRIES sizes both maps.
 * Prints one line of "key=value": samples seen and lost in BPF, bytes
 * copied out of the kernel, drains, entries and distinct stacks per drain
 * (max and mean), the map memory preallocated, and this process's CPU
 * time (user + sys, ms) from attaching to the end.  bench/aggregate.sh reads the program's BPF time
 * from /proc/PID/fdinfo (the fd is printed first, on its own line).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FRAMES 127
#define BATCH 4096

struct key {
	uint32_t pid;
	int32_t kstack, ustack;
	uint32_t pad;
};

static uint64_t nrec, nbytes;

static int on_rec(void *c, void *d, size_t s)
{
	nrec++;
	nbytes += s;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Mark stack id @id seen in @seen (a bitmap of @n bits); true the first time. */
static int first_seen(uint8_t *seen, uint32_t n, int32_t id)
{
	if (id < 0 || (uint32_t)id >= n || (seen[id / 8] & (1u << (id % 8))))
		return 0;
	seen[id / 8] |= (uint8_t)(1u << (id % 8));
	return 1;
}

struct drain_stats {
	uint64_t drains, entries, stacks, max_entries, max_stacks;
};

/* One drain of the count map and the stacks it names.  0 or -errno. */
static int drain(int cfd, int sfd, uint32_t n, struct key *keys, uint64_t *vals, uint8_t *seen,
		 struct drain_stats *ds)
{
	uint64_t frames[FRAMES], entries = 0, stacks = 0;
	uint32_t in = 0, out = 0, cnt, i;
	void *inp = NULL;
	int err;

	memset(seen, 0, (n + 7) / 8);
	for (;;) {
		cnt = BATCH;
		err = bpf_map_lookup_and_delete_batch(cfd, inp, &out, keys, vals, &cnt, NULL);
		if (err && errno != ENOENT)
			return -errno;
		nbytes += (uint64_t)cnt * (sizeof(*keys) + sizeof(*vals));
		for (i = 0; i < cnt; i++) {
			int32_t ids[2] = { keys[i].kstack, keys[i].ustack };

			for (int j = 0; j < 2; j++) {
				if (!first_seen(seen, n, ids[j]))
					continue;
				if (!bpf_map_lookup_elem(sfd, &ids[j], frames))
					nbytes += sizeof(frames);
				bpf_map_delete_elem(sfd, &ids[j]);
				stacks++;
			}
		}
		entries += cnt;
		if (err)
			break;	/* ENOENT: that was the last batch */
		in = out;
		inp = &in;
	}
	ds->drains++;
	ds->entries += entries;
	ds->stacks += stacks;
	if (entries > ds->max_entries)
		ds->max_entries = entries;
	if (stacks > ds->max_stacks)
		ds->max_stacks = stacks;
	return 0;
}

static double cpu_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

static int attach_all(struct bpf_program *p, int hz)
{
	int ncpu = libbpf_num_possible_cpus();

	for (int c = 0; c < ncpu; c++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(a), .freq = 1, .sample_freq = (uint64_t)hz,
		};
		int fd = (int)syscall(__NR_perf_event_open, &a, -1, c, -1, 0);

		if (fd < 0)
			continue; /* offline CPU */
		if (!bpf_program__attach_perf_event(p, fd)) {
			perror("aggregate: attach");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct drain_stats ds = {};
	struct bpf_object *obj;
	struct bpf_program *p;
	struct ring_buffer *rb = NULL;
	uint64_t end, next, sum[3] = {}, *pc;
	int hz, secs, ival, count, ncpu;
	uint32_t entries, z;
	struct rusage ru, ru0;
	struct key *keys;
	uint64_t *vals;
	uint8_t *seen;

	if (argc != 7) {
		fprintf(stderr, "usage: aggregate OBJ stream|count HZ SECONDS INTERVAL_MS ENTRIES\n");
		return 2;
	}
	count = !strcmp(argv[2], "count");
	hz = atoi(argv[3]);
	secs = atoi(argv[4]);
	ival = atoi(argv[5]);
	entries = (uint32_t)strtoul(argv[6], NULL, 0);
	if (hz <= 0 || secs <= 0 || ival <= 0 || entries < 16 || (!count && strcmp(argv[2], "stream")))
		return 2;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return 1;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), argv[2]));
	bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "stacks"), count ? entries : 1);
	bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "counts"), count ? entries : 1);
	if (bpf_object__load(obj))
		return 1;
	p = bpf_object__find_program_by_name(obj, argv[2]);
	if (!p || attach_all(p, hz))
		return 1;
	keys = calloc(BATCH, sizeof(*keys));
	vals = calloc(BATCH, sizeof(*vals));
	seen = calloc((entries + 7) / 8, 1);
	if (!keys || !vals || !seen)
		return 1;
	if (!count) {
		rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, "rb")), on_rec, NULL, NULL);
		if (!rb)
			return 1;
	}
	printf("%d\n", bpf_program__fd(p));
	fflush(stdout);
	getrusage(RUSAGE_SELF, &ru0);	/* the loop's CPU only, not the loading */
	end = now_ms() + (uint64_t)secs * 1000;
	next = now_ms() + (uint64_t)ival;
	while (now_ms() < end) {
		if (!count) {
			usleep(100000);
			ring_buffer__consume(rb);
			continue;
		}
		usleep((useconds_t)(next > now_ms() ? next - now_ms() : 0) * 1000);
		next += (uint64_t)ival;
		if (drain(bpf_map__fd(bpf_object__find_map_by_name(obj, "counts")),
			  bpf_map__fd(bpf_object__find_map_by_name(obj, "stacks")), entries, keys, vals, seen, &ds))
			return 1;
	}
	if (count)
		drain(bpf_map__fd(bpf_object__find_map_by_name(obj, "counts")),
		      bpf_map__fd(bpf_object__find_map_by_name(obj, "stacks")), entries, keys, vals, seen, &ds);
	else
		ring_buffer__consume(rb);
	ncpu = libbpf_num_possible_cpus();
	pc = calloc((size_t)ncpu, sizeof(*pc));
	for (z = 0; pc && z < 3; z++) {
		if (bpf_map_lookup_elem(bpf_map__fd(bpf_object__find_map_by_name(obj, "stats")), &z, pc))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum[z] += pc[c];
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("samples=%llu lost=%llu bytes=%llu records=%llu drains=%llu entries_max=%llu entries_mean=%.1f "
	       "stacks_max=%llu stacks_mean=%.1f map_bytes=%llu cpu_ms=%.1f\n",
	       (unsigned long long)sum[0], (unsigned long long)sum[1], (unsigned long long)nbytes,
	       (unsigned long long)nrec, (unsigned long long)ds.drains, (unsigned long long)ds.max_entries,
	       ds.drains ? (double)ds.entries / ds.drains : 0, (unsigned long long)ds.max_stacks,
	       ds.drains ? (double)ds.stacks / ds.drains : 0,
	       (unsigned long long)(count ? (uint64_t)entries * (FRAMES * 8 + 16 + 8 + 16) : (4u << 20)),
	       cpu_ms(&ru) - cpu_ms(&ru0));
	return 0;
}
