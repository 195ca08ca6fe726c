// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the pprof writer (view/format/report_pprof*.c), from
 * a report read from the input as fuzz_report reads it (a whole file, and
 * "records mode": fuzz_report_input.h).  What the reader accepted goes
 * through report_pprof__write_fd() into a memfd, which is then gunzipped
 * and decoded with protobuf-c's generated unpacker (not the writer's
 * code), and held to report_pprof.h and to profile.proto's rules: a gzip
 * stream that ends, a message that decodes, string 0 empty and every
 * string index in the table, every string valid UTF-8 without control
 * characters (checked here byte by byte), ids unique and not 0, every id
 * referred to defined, two values per sample, and as many samples
 * counted as the report has (no filter is given).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report/report.h"
#include "view/format/report_pprof.h"

#define FUZZ_NAME "fuzz_pprof"
#include "fuzz_common.h"
#include "fuzz_report_input.h"

#define MAX_PROFILE (64u << 20)

typedef Perftools__Profiles__Profile profile;

static ZSTD_CCtx *cctx;
static int out_fd = -1;

static void setup(void)
{
	if (cctx)
		return;
	cctx = fuzz_report_cctx();
	out_fd = memfd_create("fuzz_pprof_out", MFD_CLOEXEC);
	if (!cctx || out_fd < 0) {
		fprintf(stderr, "fuzz_pprof: cannot set up zstd or a memfd\n");
		exit(1);
	}
}

/* The gunzipped bytes of @len at @gz into a new buffer, *@out_len set; NULL: not one whole gzip stream. */
static uint8_t *gunzip(const uint8_t *gz, size_t len, size_t *out_len)
{
	z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)len };
	size_t cap = 1 << 16;
	uint8_t *buf = malloc(cap), *nb;
	int rc = Z_OK;

	CHECK(buf && inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
	while (rc == Z_OK) {
		if (z.total_out == cap) {
			CHECK(cap < MAX_PROFILE);
			nb = realloc(buf, cap * 2);
			CHECK(nb);
			buf = nb;
			cap *= 2;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
	}
	*out_len = z.total_out;
	inflateEnd(&z);
	if (rc != Z_STREAM_END || z.avail_in) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Valid UTF-8, no C0 or C1 control and no DEL: an independent reading of report_pprof.h's promise. */
static bool clean_utf8(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	while (*s) {
		if (*s < 0x80) {
			if (*s < 0x20 || *s == 0x7f)
				return false;
			s++;
			continue;
		}
		n = (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 : (*s & 0xf8) == 0xf0 ? 4 : 0;
		if (!n)
			return false;
		cp = *s & (0x7f >> n);
		for (i = 1; i < n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
			return false;
		s += n;
	}
	return true;
}

static void check_str(const profile *p, int64_t i)
{
	CHECK(i >= 0 && (uint64_t)i < p->n_string_table);
}

/* Whether id @id is one of the @n ids at @ids (each checked unique and not 0 by the caller). */
static bool has_id(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* The ids of @n messages, which must be unique and not 0: a new array (free() it). */
#define IDS(arr, n) ({								\
	uint64_t *_v = malloc(((n) ? (n) : 1) * sizeof(uint64_t));		\
	CHECK(_v);								\
	for (size_t _i = 0; _i < (n); _i++) {					\
		CHECK((arr)[_i]->id && !has_id(_v, _i, (arr)[_i]->id));	\
		_v[_i] = (arr)[_i]->id;						\
	}									\
	_v;									\
})

static void check_profile(const profile *p, const struct report *r)
{
	uint64_t *maps = IDS(p->mapping, p->n_mapping), *locs = IDS(p->location, p->n_location);
	uint64_t *funcs = IDS(p->function, p->n_function), count = 0, off_ns = 0, want_ns = 0;
	/* Off-CPU time (issue 28): a third sample type, its samples 0 CPU samples and some ns. */
	bool off = report__header(r)->off_cpu || report__nr_offcpu(r);
	size_t i, j, nv = off ? 3 : 2;

	CHECK(p->n_string_table >= 1 && !p->string_table[0][0]);
	for (i = 0; i < p->n_string_table; i++)
		CHECK(clean_utf8((const unsigned char *)p->string_table[i]));
	CHECK(p->n_sample_type == nv && p->period_type);
	for (i = 0; i < p->n_sample_type; i++) {
		check_str(p, p->sample_type[i]->type);
		check_str(p, p->sample_type[i]->unit);
	}
	check_str(p, p->period_type->type);
	check_str(p, p->period_type->unit);
	for (i = 0; i < p->n_comment; i++)
		check_str(p, p->comment[i]);
	for (i = 0; i < p->n_mapping; i++) {
		check_str(p, p->mapping[i]->filename);
		check_str(p, p->mapping[i]->build_id);
	}
	for (i = 0; i < p->n_function; i++) {
		check_str(p, p->function[i]->name);
		check_str(p, p->function[i]->system_name);
		check_str(p, p->function[i]->filename);
	}
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		CHECK(!l->mapping_id || has_id(maps, p->n_mapping, l->mapping_id));
		for (j = 0; j < l->n_line; j++)
			CHECK(has_id(funcs, p->n_function, l->line[j]->function_id));
	}
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		CHECK(s->n_value == nv && (s->value[0] > 0) != (off && s->value[2] > 0));
		count += (uint64_t)s->value[0];
		off_ns += off ? (uint64_t)s->value[2] : 0;
		for (j = 0; j < s->n_location_id; j++)
			CHECK(has_id(locs, p->n_location, s->location_id[j]));
		for (j = 0; j < s->n_label; j++) {
			check_str(p, s->label[j]->key);
			check_str(p, s->label[j]->str);
		}
	}
	CHECK(count == report__nr_samples(r));
	/* Every OFFCPU record's ns, unless their sum passes INT64_MAX (pprof's values saturate). */
	for (i = 0; i < report__nr_offcpu(r) && want_ns <= INT64_MAX; i++)
		want_ns = report__offcpu(r, i)->ns > UINT64_MAX - want_ns ? UINT64_MAX :
			  want_ns + report__offcpu(r, i)->ns;
	CHECK(off_ns == want_ns || want_ns > INT64_MAX);
	free(maps);
	free(locs);
	free(funcs);
}

static void check(const uint8_t *data, size_t len)
{
	struct report *r = report__open_mem(data, len, NULL, 0);
	uint8_t *gz, *raw;
	size_t raw_len;
	profile *p;
	off_t end;
	int err;

	if (!r)
		return;	/* fuzz_report holds the reader to its contract */
	CHECK(ftruncate(out_fd, 0) == 0 && lseek(out_fd, 0, SEEK_SET) == 0);
	err = report_pprof__write_fd(out_fd, r, NULL);
	if (err) {
		CHECK(err == -ENOMEM || err == -E2BIG);
		report__free(r);
		return;
	}
	end = lseek(out_fd, 0, SEEK_END);
	CHECK(end > 0);
	gz = mmap(NULL, (size_t)end, PROT_READ, MAP_PRIVATE, out_fd, 0);
	CHECK(gz != MAP_FAILED);
	raw = gunzip(gz, (size_t)end, &raw_len);
	munmap(gz, (size_t)end);
	CHECK(raw);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	CHECK(p);
	check_profile(p, r);
	perftools__profiles__profile__free_unpacked(p, NULL);
	report__free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t *file;
	size_t flen;

	setup();
	check(data, len);
	if (len && data[0] != (uint8_t)RPT_FILE_MAGIC[0]) {
		file = fuzz_report_wrap(cctx, data, len, &flen);
		if (!file)
			return 0;
		check(file, flen);
		free(file);
	}
	return 0;
}
