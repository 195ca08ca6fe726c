/*
 * hold: one of the hundreds of processes of bench/memory.sh.
 *
 *   hold SECONDS [LIB...]
 *
 * dlopen()s each LIB (failures ignored) so the process maps several
 * libraries, then for SECONDS burns about 0.5 ms of CPU in hold_burn()
 * every 200 ms and sleeps in between: many processes, each sampled now
 * and then, each with its own mappings for a profiler to keep.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile uint64_t sink;
static void *volatile fp_sink;

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void hold_burn(double secs)
{
	double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + secs;
	uint64_t x = (uint64_t)getpid();

	fp_sink = __builtin_frame_address(0);
	do {
		for (int i = 0; i < 2000; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			__asm__ volatile("" : "+r"(x));
		}
	} while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end);
	sink = x;
}

int main(int argc, char **argv)
{
	double end;

	if (argc < 2)
		return 2;
	end = clock_s(CLOCK_MONOTONIC) + atof(argv[1]);
	for (int i = 2; i < argc; i++)
		dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
	/* Spread the processes' bursts over the period. */
	usleep((unsigned)(getpid() % 200) * 1000);
	while (clock_s(CLOCK_MONOTONIC) < end) {
		hold_burn(0.0005);
		usleep(200000);
	}
	return 0;
}
