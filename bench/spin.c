// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spin: the CPU-bound workload of the benchmarks.  It forks WORKERS
 * processes (default: one per online CPU); each runs for SECONDS, doing
 * fixed-size units of integer work at the bottom of a call chain DEPTH
 * frames deep (so profilers walk a realistic stack: main -> worker ->
 * descend x DEPTH -> unit), and counts the units it finished.  The work
 * done, not the wall time, is the result:
 *
 *   units 123456 workers 2 seconds 5.000 rate 24691.2 cpu 10.00
 *
 * rate is units per second summed over workers (each worker's count over
 * its own elapsed time); cpu is the workers' user+sys CPU seconds.
 *
 *   cc -O2 -g -fno-omit-frame-pointer -o spin bench/spin.c
 *   ./spin SECONDS [WORKERS] [DEPTH]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERS 20000

struct result {
	uint64_t units;
	double elapsed;
};

static volatile uint64_t sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* One unit: an LCG and an xorshift, about 20-40 us on a current core. */
__attribute__((noinline)) static uint64_t unit(uint64_t x)
{
	for (int i = 0; i < UNIT_ITERS; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		x ^= x >> 29;
	}
	return x;
}

__attribute__((noinline)) static uint64_t leaf_loop(double end, uint64_t *units)
{
	uint64_t x = (uint64_t)getpid(), n = 0;

	do {
		x = unit(x);
		n++;
	} while (now() < end);
	*units = n;
	return x;
}

/* Recursion that is not a tail call, so each level keeps its frame. */
__attribute__((noinline)) static uint64_t descend(int depth, double end, uint64_t *units)
{
	uint64_t r;

	if (depth <= 0)
		return leaf_loop(end, units);
	r = descend(depth - 1, end, units);
	__asm__ volatile("" : "+r"(r));
	return r + (uint64_t)depth;
}

__attribute__((noinline)) static void worker(double seconds, int depth, struct result *res)
{
	double t0 = now();

	sink += descend(depth, t0 + seconds, &res->units);
	res->elapsed = now() - t0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 5;
	long workers = argc > 2 ? strtol(argv[2], NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	int depth = argc > 3 ? atoi(argv[3]) : 8;
	struct result *res;
	struct rusage ru;
	uint64_t total = 0;
	double rate = 0, maxel = 0, cpu;
	int failed = 0;

	if (!(seconds > 0) || workers < 1 || workers > 4096 || depth < 0 || depth > 200) {
		fprintf(stderr, "usage: spin SECONDS [WORKERS] [DEPTH]\n");
		return 2;
	}
	res = mmap(NULL, sizeof(*res) * (size_t)workers, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("spin: mmap");
		return 1;
	}
	for (long i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("spin: fork");
			failed = 1;
			break;
		}
		if (pid == 0) {
			worker(seconds, depth, &res[i]);
			_exit(0);
		}
	}
	for (;;) {
		int st;
		pid_t p = wait(&st);

		if (p < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	for (long i = 0; i < workers; i++) {
		total += res[i].units;
		if (res[i].elapsed > 0)
			rate += (double)res[i].units / res[i].elapsed;
		if (res[i].elapsed > maxel)
			maxel = res[i].elapsed;
	}
	getrusage(RUSAGE_CHILDREN, &ru);
	cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("units %llu workers %ld seconds %.3f rate %.1f cpu %.2f\n",
	       (unsigned long long)total, workers, maxel, rate, cpu);
	return failed;
}
