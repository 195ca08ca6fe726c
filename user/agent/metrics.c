// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics: the Prometheus text.  Names follow the client libraries'
 * conventions (process_cpu_seconds_total, process_resident_memory_bytes,
 * process_open_fds) so standard dashboards find them; the rest is
 * bpfsym_*.  Losses are one family per kind, labelled by cause.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/metrics.h"
#include "base/inputcap.h"
#include "base/util.h"
#include "symbolize/debuginfod.h"

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* Pages resident (statm's second field) in bytes; 0 when unreadable. */
static uint64_t rss_bytes(void)
{
	unsigned long long size, res;
	char *buf;
	size_t len;
	int n;

	if (read_file_capped("/proc/self/statm", 256, &buf, &len))
		return 0;
	n = sscanf(buf, "%llu %llu", &size, &res);
	free(buf);
	return n == 2 ? res * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static uint64_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;	/* not the directory's own fd */
}

static void process_metrics(FILE *f)
{
	struct rusage ru;
	double cpu = 0;

	if (!getrusage(RUSAGE_SELF, &ru))
		cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	family(f, "process_cpu_seconds_total", "counter", "User and system CPU time of bpfsym, all its threads, in seconds.");
	fprintf(f, "process_cpu_seconds_total %.6f\n", cpu);
	one(f, "process_resident_memory_bytes", "gauge", "Resident memory of bpfsym in bytes.", rss_bytes());
	one(f, "process_open_fds", "gauge", "File descriptors bpfsym holds open.", open_fds());
}

/* debuginfod's lookups (symbolize/debuginfod.h), process-wide atomics like inputcap's. */
static void dinfod_metrics(FILE *f)
{
	static const char *const label[DINFOD__NR] = {
		[DINFOD_ASKED] = "asked", [DINFOD_FOUND] = "found",
		[DINFOD_MISSED] = "missed", [DINFOD_TIMED_OUT] = "timed_out",
	};

	family(f, "bpfsym_debuginfod_total", "counter",
	       "Build-ids asked of debuginfod servers (DEBUGINFOD_URLS), and what came of them.");
	for (enum dinfod_count c = 0; c < DINFOD__NR; c++)
		fprintf(f, "bpfsym_debuginfod_total{outcome=\"%s\"} %" PRIu64 "\n", label[c],
			dinfod__count(c));
}

static void loss_metrics(FILE *f, const struct agent_metrics *m)
{
	family(f, "bpfsym_lost_samples_total", "counter", "Samples the BPF side could not record, by cause.");
	fprintf(f, "bpfsym_lost_samples_total{cause=\"ring_buffer_full\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_LOST_SAMPLES]);
	fprintf(f, "bpfsym_lost_samples_total{cause=\"first_sample_work\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_FIRST_LOST]);
	family(f, "bpfsym_lost_events_total", "counter",
	       "Process and mapping events missed, by cause (mappings then come from /proc or stay unknown).");
	fprintf(f, "bpfsym_lost_events_total{cause=\"ring_buffer_full\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_LOST_TASK_EVENTS]);
	fprintf(f, "bpfsym_lost_events_total{cause=\"vma_busy\"} %" PRIu64 "\n", m->bpf[BPFSYM_STAT_VMA_BUSY]);
	fprintf(f, "bpfsym_lost_events_total{cause=\"syscall_table_full\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_PENDING_FULL]);
	fprintf(f, "bpfsym_lost_events_total{cause=\"targets_full\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_TARGETS_FULL]);
	fprintf(f, "bpfsym_lost_events_total{cause=\"first_sample_no_slot\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_FIRST_DIRECT]);
	fprintf(f, "bpfsym_lost_events_total{cause=\"first_sample_too_many_vmas\"} %" PRIu64 "\n",
		m->bpf[BPFSYM_STAT_FIRST_TRUNC]);
	one(f, "bpfsym_first_samples_total", "counter",
	    "Processes whose mappings were taken whole at their first sample (whole-system and cgroup targets).",
	    m->bpf[BPFSYM_STAT_FIRST_SAMPLE]);
	one(f, "bpfsym_malformed_records_total", "counter", "Ring-buffer records skipped as malformed.", m->bad_records);
	/* Process-wide atomics (base/inputcap.h): read here, not copied by the recorder. */
	family(f, "bpfsym_input_capped_total", "counter",
	       "Sizes declared by input files (sections, symbol tables, perf maps) that a cap refused.");
	for (enum inputcap c = 0; c < INPUTCAP__NR; c++)
		fprintf(f, "bpfsym_input_capped_total{cap=\"%s\"} %" PRIu64 "\n", inputcap__label(c),
			inputcap__count(c));
	dinfod_metrics(f);
	one(f, "bpfsym_model_misses_total", "counter",
	    "Samples of processes the mapping model did not know (their maps read from /proc).", m->model_misses);
}

/* Off-CPU time (record --off-cpu): the BPF side's counts; all 0 without it. */
static void offcpu_metrics(FILE *f, const struct agent_metrics *m)
{
	static const struct { const char *outcome; enum bpfsym_stat n, ns; } o[] = {
		{ "summed", BPFSYM_STAT_OFF_SUMMED, BPFSYM_STAT_OFF_SUMMED_NS },
		{ "short", BPFSYM_STAT_OFF_SHORT, BPFSYM_STAT_OFF_SHORT_NS },
		{ "lost", BPFSYM_STAT_OFF_LOST, BPFSYM_STAT_OFF_LOST_NS },
	};
	size_t i;

	family(f, "bpfsym_offcpu_intervals_total", "counter",
	       "Off-CPU intervals ended (a target's switch-out to its switch-in): summed by stack, dropped "
	       "as shorter than --off-cpu-thresh, or lost (their stack did not reach the recorder).");
	for (i = 0; i < sizeof(o) / sizeof(o[0]); i++)
		fprintf(f, "bpfsym_offcpu_intervals_total{outcome=\"%s\"} %" PRIu64 "\n", o[i].outcome, m->bpf[o[i].n]);
	family(f, "bpfsym_offcpu_seconds_total", "counter", "The off-CPU time of those intervals.");
	for (i = 0; i < sizeof(o) / sizeof(o[0]); i++)
		fprintf(f, "bpfsym_offcpu_seconds_total{outcome=\"%s\"} %.9f\n", o[i].outcome,
			(double)m->bpf[o[i].ns] / 1e9);
	one(f, "bpfsym_offcpu_stacks_total", "counter", "Off-CPU stack records sent (keys not seen before).",
	    m->bpf[BPFSYM_STAT_OFF_STACKS]);
	one(f, "bpfsym_offcpu_untracked_total", "counter",
	    "Switch-outs not followed: the map of threads off the CPU was full.", m->bpf[BPFSYM_STAT_OFF_UNTRACKED]);
}

static void record_metrics(FILE *f, const struct agent_metrics *m)
{
	one(f, "bpfsym_recording", "gauge", "1 while the recorder runs.", m->recording);
	one(f, "bpfsym_bpf_samples_total", "counter", "Samples the BPF side put in the ring buffer.",
	    m->bpf[BPFSYM_STAT_SAMPLES]);
	one(f, "bpfsym_samples_total", "counter", "Samples read from the ring buffer and symbolized.", m->samples);
	one(f, "bpfsym_samples_written_total", "counter", "Samples written to the recording's file.", m->samples_written);
	one(f, "bpfsym_idle_samples_total", "counter", "Ticks of idle CPUs, counted and not recorded.",
	    m->bpf[BPFSYM_STAT_IDLE]);
	family(f, "bpfsym_mapping_events_total", "counter", "Process and mapping records applied to the model, by kind.");
	fprintf(f, "bpfsym_mapping_events_total{kind=\"map\"} %" PRIu64 "\n", m->mev.maps);
	fprintf(f, "bpfsym_mapping_events_total{kind=\"unmap\"} %" PRIu64 "\n", m->mev.unmaps);
	fprintf(f, "bpfsym_mapping_events_total{kind=\"fork\"} %" PRIu64 "\n", m->mev.forks);
	fprintf(f, "bpfsym_mapping_events_total{kind=\"exec\"} %" PRIu64 "\n", m->mev.execs);
	fprintf(f, "bpfsym_mapping_events_total{kind=\"exit\"} %" PRIu64 "\n", m->mev.exits);
	one(f, "bpfsym_processes_tracked", "gauge", "Processes in the mapping model now.", m->procs_tracked);
	one(f, "bpfsym_processes_seen_total", "counter", "Processes the mapping model has known.", m->procs_seen);
	one(f, "bpfsym_processes_sampled", "gauge", "Processes with at least one sample in the recording.", m->procs_sampled);
	one(f, "bpfsym_output_bytes", "gauge", "Bytes written to the current recording file.", m->bytes_written);
	one(f, "bpfsym_unwind_table_bytes", "gauge", "BPF map memory of the call-frame tables.", m->unwind_bytes);
	one(f, "bpfsym_symbol_files", "gauge", "Files whose symbol tables are in memory.", m->sym_images);
	one(f, "bpfsym_symbol_table_bytes", "gauge", "Memory of the symbol tables loaded.", m->sym_bytes);
	one(f, "bpfsym_writer_index_bytes", "gauge",
	    "Memory of the current file's index of frames and stacks written (capped).", m->index_bytes);
	one(f, "bpfsym_profile_windows", "gauge", "Profile requests being recorded now.", m->windows_active);
	one(f, "bpfsym_profile_windows_total", "counter", "Profile windows finished.", m->windows_total);
	one(f, "bpfsym_profile_inflight_bytes", "gauge",
	    "Bytes the profile windows hold (recordings, then pprofs), against a fixed budget.", m->inflight_bytes);
}

static void http_metrics(FILE *f, const struct metrics_http *h)
{
	size_t i;

	family(f, "bpfsym_http_requests_total", "counter", "HTTP answers by status code.");
	for (i = 0; i < h->nr; i++) {
		if (h->codes[i])
			fprintf(f, "bpfsym_http_requests_total{code=\"%d\"} %" PRIu64 "\n", h->codes[i], h->counts[i]);
		else
			fprintf(f, "bpfsym_http_requests_total{code=\"other\"} %" PRIu64 "\n", h->counts[i]);
	}
	one(f, "bpfsym_http_timeouts_total", "counter",
	    "Connections closed at a deadline (request head, answer, stalled reader).", h->timeouts);
	one(f, "bpfsym_http_refused_total", "counter",
	    "Connections refused: too many clients at once, or from one client.", h->refused);
	one(f, "bpfsym_http_evicted_total", "counter",
	    "Connections still sending their request head closed to make room for another.", h->evicted);
}

int metrics__format(const struct agent_metrics *m, const struct metrics_http *h, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	record_metrics(f, m);
	loss_metrics(f, m);
	offcpu_metrics(f, m);
	http_metrics(f, h);
	process_metrics(f);
	if (fclose(f) || !*out) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
