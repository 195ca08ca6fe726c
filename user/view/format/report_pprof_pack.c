// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_pprof_pack: the pprof writer, pass two.  A protobuf message may
 * be cut between fields and parsed back as one, repeated fields appending,
 * so the header and the string table are packed as one Profile, then each
 * mapping, location, function and sample as a one-element Profile through
 * one reused struct, straight into the gzip stream: memory is pass one's
 * aggregation, never a copy of the whole profile as protobuf-c structs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "view/format/report_pprof_int.h"
#include "base/util.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* How long the recording lasted; without an END record, up to its last sample (or OFFCPU record). */
static uint64_t duration_ns(const struct report *r)
{
	const struct rpt_header *h = report__header(r);
	uint64_t last = 0;
	size_t i;

	if (h->complete)
		return h->end_wall_ns > h->start_wall_ns ? h->end_wall_ns - h->start_wall_ns : 0;
	for (i = 0; i < report__nr_samples(r); i++)
		if (report__sample(r, i)->time > last)
			last = report__sample(r, i)->time;
	for (i = 0; i < report__nr_offcpu(r); i++)
		if (report__offcpu(r, i)->time > last)
			last = report__offcpu(r, i)->time;
	return last;
}

/* ---- the gzip stream protobuf-c packs into ---- */

struct gz_sink {
	ProtobufCBuffer base;	/* first: protobuf-c hands back &base */
	z_stream z;
	int fd;
	int err;		/* the first error; later appends do nothing */
	uint8_t out[1 << 16];
};

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Run deflate over what is pending with @flush, writing its output. */
static void sink__deflate(struct gz_sink *s, int flush)
{
	int ret;

	do {
		s->z.next_out = s->out;
		s->z.avail_out = sizeof(s->out);
		ret = deflate(&s->z, flush);
		if (ret == Z_STREAM_ERROR) {
			s->err = -EIO;
			return;
		}
		s->err = write_all(s->fd, s->out, sizeof(s->out) - s->z.avail_out);
	} while (!s->err && (s->z.avail_in || !s->z.avail_out || (flush == Z_FINISH && ret != Z_STREAM_END)));
}

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_sink *s = (struct gz_sink *)b;

	while (len && !s->err) {
		uInt n = len > UINT_MAX ? UINT_MAX : (uInt)len;

		s->z.next_in = (Bytef *)data;
		s->z.avail_in = n;
		sink__deflate(s, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

/* Pack @m (a Profile, usually a piece of one) into @s. */
static void sink__pack(struct gz_sink *s, const pb_profile *m)
{
	if (!s->err)
		perftools__profiles__profile__pack_to_buffer(m, &s->base);
}

static void emit_header(struct gz_sink *s, const struct pprof *p, char **strings, int64_t *comments)
{
	const struct rpt_header *h = report__header(p->r);
	uint64_t dur = duration_ns(p->r);
	pb_value_type st[3] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT, PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	pb_value_type pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *stp[3] = { &st[0], &st[1], &st[2] };
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t i;

	st[0].type = p->s_samples;
	st[0].unit = p->s_count;
	st[1].type = p->s_cpu;
	st[1].unit = p->s_ns;
	st[2].type = p->s_off_cpu;
	st[2].unit = p->s_ns;
	pt.type = p->s_cpu;
	pt.unit = p->s_ns;
	for (i = 0; i < strtab__nr(&p->strs.set); i++)
		strings[i] = (char *)strtab__str(&p->strs.set, (uint32_t)i);
	for (i = 0; i < p->nr_comments; i++)
		comments[i] = p->comments[i];
	m.n_sample_type = p->off ? 3 : 2;
	m.sample_type = stp;
	m.n_string_table = strtab__nr(&p->strs.set);
	m.string_table = strings;
	m.time_nanos = (int64_t)(h->start_wall_ns > INT64_MAX ? INT64_MAX : h->start_wall_ns);
	m.duration_nanos = (int64_t)(dur > INT64_MAX ? INT64_MAX : dur);
	m.period_type = &pt;
	m.period = h->freq ? 1000000000 / h->freq : 0;
	m.n_comment = p->nr_comments;
	m.comment = comments;
	m.default_sample_type = view__metric(p->o) == VIEW_METRIC_OFFCPU ? p->s_off_cpu : p->s_cpu;
	sink__pack(s, &m);
}

static void emit_tables(struct gz_sink *s, const struct pprof *p)
{
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT, *mpp = &mp;
	pb_location lc = PERFTOOLS__PROFILES__LOCATION__INIT, *lcp = &lc;
	pb_line ln = PERFTOOLS__PROFILES__LINE__INIT, *lnp = &ln;
	pb_function fn = PERFTOOLS__PROFILES__FUNCTION__INIT, *fnp = &fn;
	size_t i;

	m.n_mapping = 1;
	m.mapping = &mpp;
	for (i = 0; i < p->nr_maps && !s->err; i++) {
		const struct map *x = &p->maps[i];

		mp.id = i + 1;
		mp.memory_start = x->start;
		mp.memory_limit = x->limit;
		mp.file_offset = x->has_bias ? x->start - x->bias : 0;
		mp.filename = x->file;
		mp.build_id = x->build_id;
		mp.has_functions = 1;
		sink__pack(s, &m);
	}
	m.n_mapping = 0;
	m.mapping = NULL;
	m.n_location = 1;
	m.location = &lcp;
	lc.n_line = 1;
	lc.line = &lnp;
	for (i = 0; i < p->nr_locs && !s->err; i++) {
		lc.id = i + 1;
		lc.mapping_id = p->locs[i].map;
		lc.address = p->locs[i].addr;
		ln.function_id = p->locs[i].func + 1;
		ln.line = p->locs[i].line;
		sink__pack(s, &m);
	}
	m.n_location = 0;
	m.location = NULL;
	m.n_function = 1;
	m.function = &fnp;
	for (i = 0; i < p->nr_funcs && !s->err; i++) {
		fn.id = i + 1;
		fn.name = p->funcs[i].name;
		fn.system_name = p->funcs[i].name;
		fn.filename = p->funcs[i].file;
		fn.start_line = p->funcs[i].start_line;
		sink__pack(s, &m);
	}
}

static int64_t sat_mul(uint64_t a, uint64_t b)
{
	if (b && a > (uint64_t)INT64_MAX / b)
		return INT64_MAX;
	return (int64_t)(a * b);
}

/* @locids holds max_depth (at least 1) ids. */
static void emit_samples(struct gz_sink *s, const struct pprof *p, uint64_t *locids)
{
	uint64_t period = report__header(p->r)->freq ? 1000000000 / report__header(p->r)->freq : 0;
	pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_sample sm = PERFTOOLS__PROFILES__SAMPLE__INIT, *smp = &sm;
	pb_label lb[6], *lbp[6];
	int64_t values[3];
	size_t i, k;

	m.n_sample = 1;
	m.sample = &smp;
	sm.location_id = locids;
	sm.n_value = p->off ? 3 : 2;
	sm.value = values;
	sm.label = lbp;
	for (i = 0; i < 6; i++)
		lbp[i] = &lb[i];
	for (i = 0; i < p->nr_samples && !s->err; i++) {
		const struct psample *x = &p->samples[i];
		uint32_t nr = 0, j;
		const uint32_t *ids = report__stack(p->r, x->stack, &nr);

		for (j = 0; j < nr; j++)
			locids[j] = (uint64_t)p->frame_loc[ids[j]] + 1;
		if (!nr)
			locids[nr++] = (uint64_t)p->unknown_loc + 1;
		sm.n_location_id = nr;
		values[0] = (int64_t)(x->count > INT64_MAX ? INT64_MAX : x->count);
		values[1] = sat_mul(x->count, period);
		values[2] = (int64_t)(x->off_ns > INT64_MAX ? INT64_MAX : x->off_ns);
		for (k = 0; k < 6; k++)
			lb[k] = (pb_label)PERFTOOLS__PROFILES__LABEL__INIT;
		k = 0;
		lb[k].key = p->s_pid;
		lb[k++].num = x->pid;
		lb[k].key = p->s_tid;
		lb[k++].num = x->tid;
		if (x->comm) {
			lb[k].key = p->s_comm;
			lb[k++].str = x->comm;
		}
		if (x->cgroup) {
			lb[k].key = p->s_cgroup;
			lb[k++].str = x->cgroup;
		}
		if (x->ctr) {
			lb[k].key = p->s_ctr;
			lb[k++].str = x->ctr;
		}
		if (x->state) {
			lb[k].key = p->s_state;
			lb[k++].str = p->s_states[x->state - 1];
		}
		sm.n_label = k;
		sink__pack(s, &m);
	}
}

/* Pass two: the whole profile into @fd, gzip-compressed.  0 or -errno. */
static int pprof__emit(const struct pprof *p, int fd)
{
	struct gz_sink *s;
	char **strings;
	int64_t comments[sizeof(p->comments) / sizeof(p->comments[0])];
	uint64_t *locids;
	int err;

	s = calloc(1, sizeof(*s));
	strings = calloc(strtab__nr(&p->strs.set), sizeof(*strings));
	locids = calloc(p->max_depth ? p->max_depth : 1, sizeof(*locids));
	if (!s || !strings || !locids) {
		err = -ENOMEM;
		goto out;
	}
	s->base.append = sink_append;
	s->fd = fd;
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&s->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto out;
	}
	emit_header(s, p, strings, comments);
	emit_tables(s, p);
	emit_samples(s, p, locids);
	if (!s->err)
		sink__deflate(s, Z_FINISH);
	err = s->err;
	deflateEnd(&s->z);
out:
	free(s);
	free(strings);
	free(locids);
	return err;
}

/* Create a file beside @path that nothing else uses; its name in *@tmp (freed by the caller). */
static int open_temp(const char *path, char **tmp)
{
	size_t len = strlen(path) + 40;
	unsigned int i;
	int fd = -1;

	*tmp = malloc(len);
	if (!*tmp)
		return -ENOMEM;
	for (i = 0; i < 100; i++) {
		snprintf(*tmp, len, "%s.tmp.%d.%u", path, (int)getpid(), i);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		fd = -errno;
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}
int pprof__write_fd(const struct pprof *p, int fd)
{
	return pprof__emit(p, fd);
}

int pprof__write_file(const struct pprof *p, const char *path)
{
	char *tmp = NULL;
	int fd, err;

	err = output_open_special(path, &fd);
	if (err)
		return err;
	if (fd >= 0) {
		err = pprof__emit(p, fd);
		if (close(fd) && !err)
			err = -errno;
		return err;
	}
	fd = open_temp(path, &tmp);
	if (fd < 0)
		return fd;
	err = pprof__emit(p, fd);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}
