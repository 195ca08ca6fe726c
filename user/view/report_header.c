// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_header: the "# ..." lines above the table.  What a reader needs
 * to trust the rows below: where the recording comes from, how it
 * sampled, for how long, what was lost and why, what the filters and a
 * kernel-symbol override changed, and how much could not be named.
 * Strings from the file (a hostile one, perhaps) are made terminal-safe.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/inputcap.h"
#include "symbolize/debuginfod.h"
#include "view/report_agg.h"
#include "view/report_view_int.h"
#include "symbolize/symfs.h"

/* At most this many --pid/--comm values are echoed; the rest are counted. */
#define FILTER_ECHO 8

static const char *fmt_time(char *buf, size_t len, uint64_t wall_ns)
{
	time_t secs = (time_t)(wall_ns / 1000000000ULL);
	struct tm tm;

	if (!wall_ns || !gmtime_r(&secs, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "unknown");
	return buf;
}

/* A header string from the file, made safe for a terminal. */
static const char *clean(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
	view__sanitize(dst, strlen(dst), false);
	return dst;
}

/* @s on @out with control bytes as '?': user-typed, but nothing a terminal should act on. */
static void put_clean(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* One slot of the unnamed-frame summary. */
struct share {
	uint32_t reason;
	uint64_t count;
};

static int share_cmp(const void *pa, const void *pb)
{
	const struct share *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->reason < b->reason ? -1 : a->reason > b->reason;
}

/* A share of @total as "4.2%"; "<0.1%" rather than "0.0%" for a few. */
static const char *fmt_share(char *buf, size_t len, uint64_t count, uint64_t total)
{
	double pct = 100.0 * (double)count / (double)total;

	if (count && pct < 0.05)
		snprintf(buf, len, "<0.1%%");
	else
		snprintf(buf, len, "%.1f%%", pct);
	return buf;
}

/*
 * "unnamed frames: 4.2% of 12345 (anonymous memory 3.0%, no mapping 1.2%)":
 * how much of what the table shows has no name, and why, weighted by samples.
 */
static void print_unnamed(FILE *out, const struct unnamed *u)
{
	struct share v[RPT_REASON_MAX + 1];
	uint64_t unnamed = u->frames - u->by_reason[RPT_OK];
	size_t i, n = 0;
	char pct[16];

	if (!unnamed) {
		fprintf(out, "# unnamed frames: none\n");
		return;
	}
	for (i = RPT_OK + 1; i <= RPT_REASON_MAX; i++)
		if (u->by_reason[i])
			v[n++] = (struct share){ (uint32_t)i, u->by_reason[i] };
	qsort(v, n, sizeof(*v), share_cmp);
	fprintf(out, "# unnamed frames: %s of %" PRIu64 " (", fmt_share(pct, sizeof(pct), unnamed, u->frames),
		u->frames);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%s %s", i ? ", " : "", rpt_reason__str(v[i].reason),
			fmt_share(pct, sizeof(pct), v[i].count, u->frames));
	fprintf(out, ")\n");
}

/* The states of @mask (1 << enum rpt_offstate) as --off-cpu-state lists them: "S,D"; 0: "all". */
static void put_states(FILE *out, uint32_t mask)
{
	size_t i, n = 0;

	if (!mask || (mask & RPT_OS_ALL) == RPT_OS_ALL) {
		fputs("all", out);
		return;
	}
	for (i = 0; i < RPT_OS__NR; i++)
		if (mask & (1u << i))
			fprintf(out, "%s%s", n++ ? "," : "", rpt_offstate__letter((uint32_t)i));
}

/* "# filters: --pid 100,200 --comm app": what the "after filters" count means. */
static void print_filters(FILE *out, const struct view_opts *o)
{
	size_t i, np = o && o->pids ? o->nr_pids : 0, nc = o && o->comms ? o->nr_comms : 0;

	if (!np && !nc && !(o && o->container) && !(o && o->off_states))
		return;
	fprintf(out, "# filters:");
	if (o && o->off_states) {
		fputs(" --off-cpu-state ", out);
		put_states(out, o->off_states);
	}
	/* The full id: the one the prefix given matched (view_ctr__resolve). */
	if (o && o->container)
		fprintf(out, " --container %s (%zu cgroups)", o->container, o->nr_cgroups);
	if (np) {
		fprintf(out, " --pid ");
		for (i = 0; i < np && i < FILTER_ECHO; i++)
			fprintf(out, "%s%" PRIu32, i ? "," : "", o->pids[i]);
		if (np > FILTER_ECHO)
			fprintf(out, ",... (%zu in all)", np);
	}
	if (nc) {
		fprintf(out, " --comm ");
		for (i = 0; i < nc && i < FILTER_ECHO; i++) {
			fputs(i ? "," : "", out);
			put_clean(out, o->comms[i]);
		}
		if (nc > FILTER_ECHO)
			fprintf(out, ",... (%zu in all)", nc);
	}
	fputc('\n', out);
}

/*
 * "# also missed: ...": the losses other than a full ring buffer, by cause,
 * only those that happened (files from before these counters have none).
 */
static void print_missed(FILE *out, const struct rpt_header *h)
{
	const struct {
		uint64_t n;
		const char *what;
	} v[] = {
		{ h->missed_vma_busy, "mapping events (VMA unreadable: mmap lock busy)" },
		{ h->missed_syscalls, "mapping events (syscall arguments not kept: map full)" },
		{ h->lost_children, "child processes not followed (target map full)" },
		{ h->bad_records, "malformed ring-buffer records" },
		{ h->unwritten, "samples not written (no file could be written: disk full?)" },
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (!v[i].n)
			continue;
		fprintf(out, "%s%" PRIu64 " %s", n++ ? ", " : "# also missed: ", v[i].n, v[i].what);
	}
	if (n)
		fputc('\n', out);
}

/*
 * "# input caps hit: ...": sizes that files declared and a cap refused
 * (their names or tables are missing), only when any was.
 */
static void print_capped(FILE *out, const struct rpt_header *h)
{
	const char *what;
	size_t i, n = 0;

	for (i = 0; i < RPT_CAPPED_MAX; i++) {
		if (!h->capped[i])
			continue;
		what = inputcap__what((enum inputcap)i);
		fprintf(out, "%s%" PRIu64 " ", n++ ? ", " : "# input caps hit: ", h->capped[i]);
		if (what)
			fputs(what, out);
		else
			fprintf(out, "refusals by cap %zu (a newer bpfsym's)", i);
	}
	if (n)
		fputc('\n', out);
}

/*
 * "# debuginfod: ...": the build-ids the recorder asked debuginfod for
 * and what came of it, only when it asked (symbolize/debuginfod.h).
 */
static void print_dinfod(FILE *out, const struct rpt_header *h)
{
	const uint64_t *d = h->dinfod, asked = d[DINFOD_ASKED];
	uint64_t answered = d[DINFOD_FOUND] + d[DINFOD_MISSED] + d[DINFOD_TIMED_OUT];

	if (!asked)
		return;
	fprintf(out, "# debuginfod: %" PRIu64 " build-ids asked: %" PRIu64 " found, %" PRIu64
		" missed, %" PRIu64 " timed out", asked, d[DINFOD_FOUND], d[DINFOD_MISSED],
		d[DINFOD_TIMED_OUT]);
	if (asked > answered)
		fprintf(out, ", %" PRIu64 " unanswered when the file ended", asked - answered);
	fputc('\n', out);
}

/*
 * "# interpreter frames: ...": what came of the interpreters' frames
 * (named, or why not) and the user sides cut at a frame that could not be
 * decoded, only when there was any (issue 27; 0 in older files).
 */
static void print_interp(FILE *out, const struct rpt_header *h)
{
	const char *what;
	size_t i, n = 0;

	for (i = 0; i < RPT_INTERP_MAX; i++) {
		if (!h->interp[i])
			continue;
		what = rpt_interp__str((uint32_t)i);
		fprintf(out, "%s%" PRIu64 " ", n++ ? ", " : "# interpreter frames: ", h->interp[i]);
		if (what)
			fputs(what, out);
		else
			fprintf(out, "counted by reason %zu (a newer bpfsym's)", i);
	}
	if (n)
		fputc('\n', out);
}

/* "# lost: ...": each counter with its cause, and its share of what was sampled. */
static void print_lost(FILE *out, const struct rpt_header *h)
{
	char pct[16];

	if (!h->complete) {
		fprintf(out, "# lost: unknown (no END record)\n"
			"# WARNING: truncated recording (no END record, the recorder was killed?): "
			"shown up to the last complete block\n");
		return;
	}
	fprintf(out, "# lost: %" PRIu64 " samples (ring buffer full", h->lost_samples);
	if (h->lost_samples)
		fprintf(out, ": %s of those taken",
			fmt_share(pct, sizeof(pct), h->lost_samples, h->lost_samples + h->samples));
	fprintf(out, "), %" PRIu64 " mapping/process events (ring buffer full); processes seen: %" PRIu64 "\n",
		h->lost_events, h->nr_procs);
	print_missed(out, h);
	print_capped(out, h);
	print_dinfod(out, h);
	print_interp(out, h);
}

/*
 * The user-stack walk: how, why each stack ended (every sample walked
 * here counts once), and what its tables cost; caps only when hit.
 */
static void print_unwind(FILE *out, const struct rpt_header *h)
{
	static const char *const why[] = { "root", "no-table", "unsupported", "read-fault",
					   "depth", "no-mapping", "no-process", "bad-frame" };
	const struct rpt_unwind *u = &h->unw;
	const struct {
		uint64_t n;
		const char *what;
	} caps[] = {
		{ u->over_mem, "files not built: table memory full" },
		{ u->over_rows, "files over the rows-per-file cap" },
		{ u->over_tables, "files past the table cap" },
		{ u->over_procs, "processes past the process cap (frame pointers there)" },
		{ u->over_ranges, "process views cut at 256 executable mappings" },
	};
	size_t i, n = 0;

	if (h->call_graph == RPT_CG_UNKNOWN)
		return;
	fprintf(out, "# call graph: %s\n", h->call_graph == RPT_CG_FP ? "fp (frame pointers)" :
		"dwarf (call-frame tables; frame pointers where a file has none)");
	fprintf(out, "# user stacks ended:");
	for (i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		fprintf(out, "%s %s %" PRIu64, i ? "," : "", why[i], h->uend[i + 1]);
	fputc('\n', out);
	if (h->call_graph != RPT_CG_DWARF)
		return;
	fprintf(out, "# unwind tables: %" PRIu64 " files (%" PRIu64 " built, %" PRIu64
		" without call-frame information, %" PRIu64 " unreadable, %" PRIu64
		" not built when recording ended), %" PRIu64 " rows, %.1f MiB of BPF maps, "
		"built in %.0f ms of CPU (longest file %.0f ms)\n",
		u->tables, u->ready, u->none, u->failed, u->pending, u->rows,
		(double)u->bytes / (1 << 20), u->build_ns / 1e6, u->max_build_ns / 1e6);
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (caps[i].n)
			fprintf(out, "%s%" PRIu64 " %s", n++ ? ", " : "# unwind caps hit: ", caps[i].n,
				caps[i].what);
	if (n)
		fputc('\n', out);
}

/*
 * "# off-CPU: ..." (issue 28): the off-CPU time the recording holds, how
 * it was recorded and what was dropped or lost, then which metric this
 * view shows and how to ask for the others.  Nothing for a recording
 * without off-CPU time.
 */
static void print_offcpu(FILE *out, const struct report *r, const struct view_opts *o, const struct agg *a)
{
	const struct rpt_header *h = report__header(r);
	const uint64_t *c = h->offcpu;
	size_t i, nr = report__nr_offcpu(r);
	uint64_t ns = 0;

	if (!h->off_cpu && !nr)
		return;
	for (i = 0; i < nr; i++)
		ns += report__offcpu(r, i)->ns;
	fprintf(out, "# off-CPU: %zu records, %.3f s off the CPU (states ", nr, (double)ns / 1e9);
	put_states(out, h->off_cpu_states);
	if (h->off_cpu_min_ns)
		fprintf(out, ", intervals under %.3f ms dropped", (double)h->off_cpu_min_ns / 1e6);
	fputc(')', out);
	if (h->complete)
		fprintf(out, "; dropped as short: %" PRIu64 " intervals (%.3f s); lost: %" PRIu64
			" intervals (%.3f s); user stack cut short: %" PRIu64 " intervals (%.3f s)",
			c[RPT_OC_SHORT], (double)c[RPT_OC_SHORT_NS] / 1e9, c[RPT_OC_LOST],
			(double)c[RPT_OC_LOST_NS] / 1e9, c[RPT_OC_CUT], (double)c[RPT_OC_CUT_NS] / 1e9);
	fputc('\n', out);
	switch (view__metric(o)) {
	case VIEW_METRIC_OFFCPU:
		fprintf(out, "# shown: off-CPU time (--off-cpu): %.3f s in %" PRIu64 " records%s\n",
			(double)a->offcpu_ns / 1e9, a->kept_offcpu, a->kept_offcpu != nr ? " after filters" : "");
		break;
	case VIEW_METRIC_WALL:
		fprintf(out, "# shown: wall-clock time (--wall): %" PRIu64 " CPU samples at %.3f ms each "
			"(1 / %u Hz), %.3f s off the CPU in %" PRIu64 " records\n", a->kept_samples,
			(double)view__sample_weight(o, r) / 1e6, h->freq, (double)a->offcpu_ns / 1e9,
			a->kept_offcpu);
		break;
	default:
		fprintf(out, "# shown: CPU samples; --off-cpu shows the off-CPU time, --wall both "
			"(wall-clock time per thread)\n");
	}
}

/* The time of the last sample or OFFCPU record: a truncated recording's duration, at least. */
static uint64_t last_time(const struct report *r)
{
	uint64_t last = 0;
	size_t i;

	for (i = 0; i < report__nr_samples(r); i++)
		if (report__sample(r, i)->time > last)
			last = report__sample(r, i)->time;
	for (i = 0; i < report__nr_offcpu(r); i++)
		if (report__offcpu(r, i)->time > last)
			last = report__offcpu(r, i)->time;
	return last;
}

void view__print_header(FILE *out, const struct report *r, const struct view_opts *o,
			const struct agg *ag, const struct unnamed *u)
{
	const struct rpt_header *h = report__header(r);
	const struct frame_namer *namer = view__namer(o);
	const char *src = report__source(r);
	char a[sizeof(h->target)], b[sizeof(h->target)], c[sizeof(h->target)];

	fprintf(out, "# bpfsym report%s", src ? ": " : "");
	put_clean(out, src ? src : "");
	fprintf(out, "\n# host: %s, kernel: %s, boot id: %s\n", clean(a, sizeof(a), h->hostname),
		clean(b, sizeof(b), h->release), clean(c, sizeof(c), h->boot_id));
	if (h->kfeatures[0])
		fprintf(out, "# kernel: %s; %s\n", clean(a, sizeof(a), h->release),
			clean(b, sizeof(b), h->kfeatures));
	fprintf(out, "# event: %s at %u Hz on %u CPUs%s, target: %s\n", clean(a, sizeof(a), h->event),
		h->freq, h->nr_cpus,
		h->flags & RPT_HF_USER_ONLY ? " (user stacks only)" :
		h->flags & RPT_HF_KERNEL_ONLY ? " (kernel stacks only)" : "",
		clean(b, sizeof(b), h->target));
	fmt_time(a, sizeof(a), h->start_wall_ns);
	if (h->complete) {
		uint64_t d = h->end_wall_ns > h->start_wall_ns ? h->end_wall_ns - h->start_wall_ns : 0;

		fprintf(out, "# started: %s, duration: %.3f s\n", a, (double)d / 1e9);
	} else {
		/* No END record, no end time: the last sample is the best lower bound. */
		fprintf(out, "# started: %s, duration: %.3f s to the last sample\n", a,
			(double)last_time(r) / 1e9);
	}
	fprintf(out, "# samples: %" PRIu64, h->samples);
	if (view__wants_samples(o) && ag->kept_samples != report__nr_samples(r))
		fprintf(out, ", %" PRIu64 " after filters", ag->kept_samples);
	/* Not a loss: the ticks when a CPU had nothing to run, for scale. */
	if (h->complete && h->idle)
		fprintf(out, "; idle CPU ticks (not recorded): %" PRIu64, h->idle);
	fputc('\n', out);
	print_lost(out, h);
	print_offcpu(out, r, o, ag);
	print_unwind(out, h);
	print_filters(out, o);
	if (frame_namer__source(namer)) {
		uint64_t d = frame_namer__delta(namer);

		fprintf(out, "# kernel symbols: from ");
		put_clean(out, frame_namer__source(namer));
		fprintf(out, ", relocated by %s0x%" PRIx64 " from the recorded _text 0x%" PRIx64 "\n",
			d >> 63 ? "-" : "+", d >> 63 ? -d : d, h->text_addr);
	}
	if (frame_namer__symfs(namer))
		symfs__print_header(frame_namer__symfs(namer), out);
	print_unnamed(out, u);
}
