// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * busy: a CPU-bound workload with a known shape, for `make run` and for
 * trying bpfsym by hand.  Three functions share the work (about 40/30/30
 * under perf here) below a fixed call chain (main -> run -> step ->
 * {crunch, hash_block, sort_pass}), and every 64th round writes to
 * /dev/null so some kernel time shows too.
 *
 *   cc -O2 -g -fno-omit-frame-pointer -o busy examples/busy.c
 *   ./busy 5 &  sudo ./bpfsym -p $! ; ./bpfsym report
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t crunch(uint64_t x)
{
	for (int i = 0; i < 300000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static uint64_t hash_block(uint64_t x)
{
	for (int i = 0; i < 200000; i++)
		x ^= (x << 13) ^ (x >> 7) ^ (x << 17);
	return x;
}

__attribute__((noinline)) static uint64_t sort_pass(uint64_t x)
{
	uint32_t v[64];

	for (int r = 0; r < 40; r++) {
		for (int i = 0; i < 64; i++)
			v[i] = (uint32_t)(x >> (i % 32)) * 2654435761u + (uint32_t)i;
		for (int i = 1; i < 64; i++)
			for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
				uint32_t t = v[j];

				v[j] = v[j - 1];
				v[j - 1] = t;
			}
		x += v[r % 64];
	}
	return x;
}

__attribute__((noinline)) static void step(int fd, uint64_t round)
{
	char buf[4096];

	sink += crunch(round);
	sink += hash_block(round);
	if (round % 64 == 0) {
		memset(buf, (int)round, sizeof(buf));
		for (int i = 0; i < 256; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				break;
	}
	sink += sort_pass(round);
}

__attribute__((noinline)) static void run(double seconds)
{
	struct timespec t0, t;
	int fd = open("/dev/null", O_WRONLY);
	uint64_t round = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		step(fd, round++);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 5;

	if (!(seconds > 0)) {
		fprintf(stderr, "usage: busy [SECONDS]\n");
		return 2;
	}
	run(seconds);
	return 0;
}
