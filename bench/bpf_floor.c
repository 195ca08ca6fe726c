// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpf_floor PROG HZ SECONDS: load one program of bpf_floor.bpf.o, attach
 * it to a cpu-clock event at HZ on every CPU, drain the ring buffer
 * (epoll, 10 ms timeout, so programs that never wake it are read too),
 * print the program's fd, and stop after SECONDS.  bench/bpf_floor.sh reads
 * the program's run_time_ns/run_cnt from /proc/PID/fdinfo/FD.
 */
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int drop(void *c, void *d, size_t s)
{
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	struct ring_buffer *rb;
	int ncpu, hz, secs;
	time_t end;

	if (argc != 5) {
		fprintf(stderr, "usage: bpf_floor OBJ PROG HZ SECONDS\n");
		return 2;
	}
	hz = atoi(argv[3]);
	secs = atoi(argv[4]);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return 1;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), argv[2]));
	if (bpf_object__load(obj))
		return 1;
	p = bpf_object__find_program_by_name(obj, argv[2]);
	if (!p)
		return 1;
	ncpu = libbpf_num_possible_cpus();
	for (int c = 0; c < ncpu; c++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(a), .freq = 1, .sample_freq = hz,
		};
		int fd = syscall(__NR_perf_event_open, &a, -1, c, -1, 0);

		if (fd < 0)
			continue; /* offline CPU */
		if (!bpf_program__attach_perf_event(p, fd)) {
			perror("bpf_floor: attach");
			return 1;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, "rb")), drop, NULL, NULL);
	if (!rb)
		return 1;
	printf("%d\n", bpf_program__fd(p));
	fflush(stdout);
	end = time(NULL) + secs;
	while (time(NULL) < end)
		ring_buffer__poll(rb, 10);
	return 0;
}
