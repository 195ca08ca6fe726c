// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `bpfsym report --perf-script` over the shared fixture recording
 * (report_fixture.h): every line in perf script's grammar, samples in
 * time order, the exact text of chosen samples (return addresses as on
 * the stack, file offsets for files, "[unknown]" with the DSO, "//anon"),
 * the filters, and kernel names from another kallsyms.
 */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <unistd.h>

#include "test.h"
#include "view/frame_namer.h"
#include "symbolize/kernel/kallsyms.h"
#include "report/report.h"
#include "view/format/report_script.h"
#include "view/report_view.h"

TEST_SUITE("report_script");

#include "report_fixture.h"
#include "view_render.h"

/*
 * The grammar tests/integration/test_perf_script.sh applies to perf's own
 * output too: a sample header (PID/TID or TID, [CPU] and PERIOD optional,
 * as perf prints them depending on the recording; perf's unknown thread
 * is pid -1), frame lines, empty lines.
 */
#define RE_HEADER "^[^ \t].* +-?[0-9]+(/-?[0-9]+)? +(\\[[0-9]+\\] +)?[0-9]+\\.[0-9]{6}: +([0-9]+ +)?[^ ]+: *$"
#define RE_FRAME "^\t *[0-9a-f]+ (\\[unknown\\]|.+\\+0x[0-9a-f]+) \\(.+\\)$"

static char path[PATH_MAX];

static struct report *open_fixture(size_t nr)
{
	struct report *r;

	tmp_path(path, sizeof(path), "script");
	if (!fx_write(path, nr, 50))
		return NULL;
	r = report__open(path, errbuf, sizeof(errbuf));
	unlink(path);
	if (!ASSERT_OK_PTR(r, errbuf))
		return NULL;
	fx_check(r, nr, true);
	return r;
}

/* --perf-script of @r with @o into a string (view_render.h). */
static char *script_of(const struct report *r, const struct view_opts *o)
{
	return render(report_script__write, r, o);
}

/* Check every line of @out against the grammar; returns the number of sample headers. */
static size_t check_grammar(char *out)
{
	regex_t hdr, frame;
	size_t samples = 0;
	char *line, *save = NULL;
	bool in_sample = false;

	if (!ASSERT_OK(regcomp(&hdr, RE_HEADER, REG_EXTENDED | REG_NOSUB), "regcomp header") ||
	    !ASSERT_OK(regcomp(&frame, RE_FRAME, REG_EXTENDED | REG_NOSUB), "regcomp frame"))
		return 0;
	ASSERT_TRUE(!*out || out[strlen(out) - 1] == '\n', "ends with a newline");
	ASSERT_FALSE(strstr(out, "\n\n\n"), "one empty line between samples");
	/* strtok_r skips empty lines: they are checked by the "\n\n" counts. */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!regexec(&hdr, line, 0, NULL, 0)) {
			samples++;
			in_sample = true;
			continue;
		}
		if (!ASSERT_TRUE(in_sample && !regexec(&frame, line, 0, NULL, 0), line))
			break;
		/* perf's %16lx after the tab. */
		if (!ASSERT_TRUE(strlen(line) > 18 && line[17] == ' ' && line[16] != ' ', line))
			break;
	}
	regfree(&hdr);
	regfree(&frame);
	return samples;
}

static void test_grammar(void)
{
	struct report *r = open_fixture(300);
	char *out, *p;
	size_t n = 0;

	if (!r)
		return;
	out = script_of(r, NULL);
	if (!ASSERT_OK_PTR(out, "output"))
		goto out;
	for (p = out; (p = strstr(p, "\n\n")); p += 2)
		n++;
	ASSERT_EQ(n, (size_t)300, "one empty line after each sample");
	ASSERT_EQ(check_grammar(out), (size_t)300, "one header per sample");
	free(out);
out:
	report__free(r);
}

/* The sample header lines' times, in output order, must not go back. */
static void test_time_order(void)
{
	struct report *r = open_fixture(300);
	unsigned long long s, us, last = 0, t;
	size_t n = 0;
	char *out, *line;

	if (!r)
		return;
	out = script_of(r, NULL);
	for (line = out; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *c;

		if (*line == '\t' || *line == '\n')
			continue;
		c = strstr(line, "] ");
		if (!ASSERT_OK_PTR(c, "cpu field") || !ASSERT_EQ(sscanf(c + 2, "%llu.%llu:", &s, &us), 2, line))
			break;
		t = s * 1000000 + us;
		if (!ASSERT_TRUE(t >= last, "time order"))
			break;
		last = t;
		n++;
	}
	ASSERT_EQ(n, (size_t)300, "headers");
	free(out);
	report__free(r);
}

/* The fixture's samples i with stack i % 6 and comm i % 4, at start_mono + time. */
static void test_exact(void)
{
	struct report *r = open_fixture(12);
	char want[8192], *out, *p;
	uint64_t t;

	if (!r)
		return;
	out = script_of(r, NULL);
	if (!ASSERT_OK_PTR(out, "output"))
		goto out;

	/*
	 * Sample 0: pid 100 = tid, cpu 0, "app", stack 0: two kernel frames,
	 * then two user frames; each side's leaf as recorded, the callers
	 * one byte further (the return address) and so their offsets.
	 */
	t = fx_hdr.start_mono_ns + fx.samples[0].time;
	snprintf(want, sizeof(want),
		 "app   100/100   [000] %5llu.%06llu:   10101010 cpu-clock: \n"
		 "\tffffffff81234567 do_syscall_64+0x17 ([kernel.kallsyms])\n"
		 "\tffffffff81abcdf0 entry_SYSCALL_64+0x1 ([kernel.kallsyms])\n"
		 "\t           28000 __libc_write+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
		 "\t            1235 main+0x1 (/opt/app/bin/app)\n"
		 "\n", (unsigned long long)(t / 1000000000), (unsigned long long)(t % 1000000000 / 1000));
	ASSERT_TRUE(!strncmp(out, want, strlen(want)), out);

	/* Sample 2: pid 300 = tid + 1, cpu 2, comm "a;b c", stack 2: outside any symbol. */
	ASSERT_TRUE(strstr(out, "a;b c   300/299   [002] "), "pid/tid, comm with a blank");
	ASSERT_TRUE(strstr(out, "cpu-clock: \n"
				"\t            9999 [unknown] (/opt/app/bin/app)\n"
				"\t            1235 main+0x1 (/opt/app/bin/app)\n\n"), "unnamed in a file: its offset");
	/* Sample 3: no comm (":PID", as perf), stack 3: no mapping, the raw address. */
	ASSERT_TRUE(strstr(out, ":100   100/0     [003] "), "empty comm");
	ASSERT_TRUE(strstr(out, "cpu-clock: \n"
				"\t            1000 [unknown] ([unknown])\n\n"), "no mapping");
	/* Sample 4: pid 4000000000 (past the field width), stack 4: no frames at all. */
	ASSERT_TRUE(strstr(out, "app 4000000000/4000000000 [000] "), "wide pid");
	p = strstr(out, "app 4000000000/4000000000 [000] ");
	ASSERT_TRUE(p && strstr(p, "cpu-clock: \n\n"), "empty stack: header, empty line");
	/* Sample 5: stack 5, anonymous memory as perf names it, a 5000-byte symbol. */
	ASSERT_TRUE(strstr(out, "cpu-clock: \n"
				"\t              40 [unknown] (//anon)\n"
				"\t            2001 abcdefghijklmnop"), "anon, then a long name");
	ASSERT_TRUE(strstr(out, "xyzabcdefg+0x4 (/opt/app/bin/app)\n"
				"\t            1235 main+0x1 (/opt/app/bin/app)\n\n"), "long name's offset");
	free(out);
out:
	report__free(r);
}

static void test_filters(void)
{
	static const uint32_t pids[] = { 300 };
	static const char *const comms[] = { "" };
	struct view_opts o = { .pids = pids, .nr_pids = 1 };
	struct report *r = open_fixture(60);
	char *out, *line;
	size_t n = 0, want = 0, i;

	if (!r)
		return;
	for (i = 0; i < 60; i++)
		want += fx.samples[i].pid == 300;
	out = script_of(r, &o);
	for (line = out; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (*line == '\t' || *line == '\n')
			continue;
		ASSERT_TRUE(strstr(line, " 300/"), line);
		n++;
	}
	ASSERT_EQ(n, want, "--pid 300: its samples only");
	free(out);

	o = (struct view_opts){ .comms = comms, .nr_comms = 1 };
	for (i = 0, want = 0; i < 60; i++)
		want += !fx.samples[i].comm[0];
	out = script_of(r, &o);
	for (line = out, n = 0; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (*line == '\t' || *line == '\n')
			continue;
		ASSERT_EQ(*line, ':', "--comm '': the nameless");
		n++;
	}
	ASSERT_EQ(n, want, "--comm ''");
	free(out);

	o.pids = (const uint32_t[]){ 7 };
	o.nr_pids = 1;
	out = script_of(r, &o);
	ASSERT_STREQ(out, "", "nothing kept: nothing printed");
	free(out);
	report__free(r);
}

/* Kernel frames from a kallsyms whose _text moved by 0x10000000: new names, new addresses. */
static void test_kallsyms(void)
{
	static const char text[] =
		"ffffffff91000000 T _text\n"
		"ffffffff91234000 T new_syscall\n"
		"ffffffff91abcd00 T new_entry\n"
		"ffffffff92000000 T _etext\n";
	struct report *r = open_fixture(6);
	struct ksyms *ks = ksyms__parse(text, sizeof(text) - 1);
	struct frame_namer *n = NULL;
	struct view_opts o = {};
	char *out;

	if (!r || !ASSERT_OK_PTR(ks, "ksyms__parse"))
		goto out;
	n = frame_namer__new(r, ks, "moved", errbuf, sizeof(errbuf));
	if (!ASSERT_OK_PTR(n, errbuf))
		goto out;
	o.namer = n;
	out = script_of(r, &o);
	ASSERT_TRUE(out && strstr(out, "cpu-clock: \n"
				       "\tffffffff91234567 new_syscall+0x567 ([kernel.kallsyms])\n"
				       "\tffffffff91abcdf0 new_entry+0xf0 ([kernel.kallsyms])\n"
				       "\t           28000 __libc_write+0x10 (/usr/lib"), out);
	ASSERT_FALSE(out && strstr(out, "do_syscall_64"), "no recorded kernel name left");
	ASSERT_FALSE(out && strstr(out, "_[k]"), "perf prints kernel names plain");
	free(out);
out:
	frame_namer__free(n);
	ksyms__free(ks);
	report__free(r);
}

static void test_errors(void)
{
	struct report *r = open_fixture(6);
	FILE *f;

	if (!r)
		return;
	ASSERT_EQ(report_script__write(NULL, r, NULL), -EINVAL, "no stream");
	ASSERT_EQ(report_script__write(stdout, NULL, NULL), -EINVAL, "no report");
	/* A full device: the error is reported, not swallowed. */
	f = fopen("/dev/full", "w");
	if (f) {
		ASSERT_EQ(report_script__write(f, r, NULL), -EIO, "/dev/full");
		fclose(f);
	}
	report__free(r);
}

int main(void)
{
	fx_init();
	RUN_TEST(test_grammar);
	RUN_TEST(test_time_order);
	RUN_TEST(test_exact);
	RUN_TEST(test_filters);
	RUN_TEST(test_kallsyms);
	RUN_TEST(test_errors);
	return TEST_EXIT();
}
