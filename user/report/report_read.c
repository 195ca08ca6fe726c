// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_read: loads a bpfsym.data file into memory and checks all of it
 * on the way in: every length before it is used, every varint, every id
 * reference, every decompressed size against a cap.  The views then trust
 * what they get.  docs/FORMAT.md has the layout and the truncation rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/util.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "report/report_int.h"

struct parser {
	struct report *r;
	const char *path;	/* NULL: from memory */
	char *err;
	size_t errlen;
	uint64_t block_off;	/* file offset of the block being parsed */
	unsigned int block;	/* its index, for messages */
	const uint8_t *data;	/* its decompressed records */
	size_t rec_off;		/* offset of the current record in data */
	bool have_header, have_end;
	uint64_t prev_time;
	uint64_t prev_off_time;	/* OFFCPU records' own time chain */
	uint64_t forgets;	/* FORGET records: ids past one may repeat an identity */
	uint64_t waiting;	/* frames of files that had not answered: may be written again, named */
	uint32_t version;	/* the file header's */
};

static const char *const rec_names[] = {
	[RPT_REC_HEADER] = "HEADER", [RPT_REC_STRING] = "STRING", [RPT_REC_MODULE] = "MODULE",
	[RPT_REC_FRAME] = "FRAME", [RPT_REC_STACK] = "STACK", [RPT_REC_SAMPLE] = "SAMPLE",
	[RPT_REC_END] = "END", [RPT_REC_CGROUP] = "CGROUP", [RPT_REC_FORGET] = "FORGET",
	[RPT_REC_OFFCPU] = "OFFCPU",
};

static const char *human(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t div = 1024;
	int u = 0;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 " bytes", v);
		return buf;
	}
	while (u < 5 && v / div >= 1024) {
		div *= 1024;
		u++;
	}
	if (v % div == 0)
		snprintf(buf, len, "%" PRIu64 " %s", v / div, units[u]);
	else
		snprintf(buf, len, "%.1f %s", (double)v / (double)div, units[u]);
	return buf;
}

static void set_err(const struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(const struct parser *ps, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	if (!ps->err || !ps->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->path)
		snprintf(ps->err, ps->errlen, "report: '%s': %s", ps->path, msg);
	else
		snprintf(ps->err, ps->errlen, "report: <memory>: %s", msg);
}

/* Corrupt input at file offset @off.  Returns -EINVAL. */
#define bad_at(ps, off, fmt, ...) \
	(set_err((ps), "offset %" PRIu64 ": " fmt, (uint64_t)(off), ##__VA_ARGS__), -EINVAL)

/* Corrupt record: the offset is its block's, the record's place in the block's data follows. */
#define bad_rec(ps, type, fmt, ...)							\
	(set_err((ps), "offset %" PRIu64 ": block %u, data byte %zu: %s record: " fmt,	\
		 (ps)->block_off, (ps)->block, (ps)->rec_off, rec_name(type), ##__VA_ARGS__), -EINVAL)

static const char *rec_name(uint64_t type)
{
	if (type < sizeof(rec_names) / sizeof(rec_names[0]) && rec_names[type])
		return rec_names[type];
	return "unknown";
}

static const char *report__strdup(struct report *r, const uint8_t *p, size_t n)
{
	struct chunk *ch = r->chunks;
	char *s;

	if (!ch || ch->cap - ch->used < n + 1) {
		/* A big string gets a chunk of its own behind the current one. */
		size_t cap = n + 1 > CHUNK_SIZE / 4 ? n + 1 : CHUNK_SIZE;

		if (report__charge(r, 0, sizeof(*ch) + cap)) {
			errno = E2BIG;
			return NULL;
		}
		ch = malloc(sizeof(*ch) + cap);
		if (!ch) {
			r->mem -= sizeof(*ch) + cap;
			errno = ENOMEM;
			return NULL;
		}
		ch->used = 0;
		ch->cap = cap;
		if (cap != CHUNK_SIZE && r->chunks) {
			ch->next = r->chunks->next;
			r->chunks->next = ch;
		} else {
			ch->next = r->chunks;
			r->chunks = ch;
		}
	}
	s = ch->data + ch->used;
	memcpy(s, p, n);
	s[n] = '\0';
	ch->used += n + 1;
	return s;
}

static int read_fixed_str(struct rpt_cur *c, char *dst, size_t size)
{
	uint64_t n;

	if (rpt_cur__uv(c, &n) || n > (uint64_t)(c->end - c->p) || n >= size || memchr(c->p, 0, n))
		return -EINVAL;
	memcpy(dst, c->p, n);
	dst[n] = '\0';
	c->p += n;
	return 0;
}

static int parse_header(struct parser *ps, struct rpt_cur *c)
{
	struct rpt_header *h = &ps->r->hdr;
	int err;

	if (ps->have_header)
		return bad_rec(ps, RPT_REC_HEADER, "a second one");
	err = read_fixed_str(c, h->hostname, sizeof(h->hostname));
	err = err ?: read_fixed_str(c, h->release, sizeof(h->release));
	err = err ?: read_fixed_str(c, h->boot_id, sizeof(h->boot_id));
	err = err ?: read_fixed_str(c, h->event, sizeof(h->event));
	err = err ?: read_fixed_str(c, h->target, sizeof(h->target));
	err = err ?: rpt_cur__uv(c, &h->text_addr);
	err = err ?: rpt_cur__u32(c, &h->freq);
	err = err ?: rpt_cur__u32(c, &h->flags);
	err = err ?: rpt_cur__u32(c, &h->nr_cpus);
	err = err ?: rpt_cur__uv(c, &h->start_wall_ns);
	err = err ?: rpt_cur__uv(c, &h->start_mono_ns);
	/* Appended later: absent from older files. */
	if (!err && c->p < c->end)
		err = read_fixed_str(c, h->kfeatures, sizeof(h->kfeatures));
	if (!err && c->p < c->end)
		err = rpt_offcpu__read_header(c, h);
	if (err)
		return bad_rec(ps, RPT_REC_HEADER, "malformed field");
	ps->have_header = true;
	return 0;
}

static int parse_string(struct parser *ps, struct rpt_cur *c)
{
	struct report *r = ps->r;
	size_t n = (size_t)(c->end - c->p);
	const char *s;
	int err;

	if (memchr(c->p, 0, n))
		return bad_rec(ps, RPT_REC_STRING, "NUL byte inside");
	if (r->nr_strs >= RPT_ID_LIMIT)
		return bad_rec(ps, RPT_REC_STRING, "too many strings");
	err = report__grow(r, (void **)&r->strs, &r->cap_strs, r->nr_strs + 1, sizeof(*r->strs));
	if (err)
		return err;
	s = report__strdup(r, c->p, n);
	if (!s)
		return -errno;
	r->strs[r->nr_strs++] = s;
	return 0;
}

static int parse_module(struct parser *ps, struct rpt_cur *c)
{
	struct report *r = ps->r;
	struct rpt_module m = {};
	uint32_t path;
	uint64_t bid;
	int err;

	err = rpt_cur__u32(c, &m.kind);
	err = err ?: rpt_cur__u32(c, &path);
	err = err ?: rpt_cur__uv(c, &bid);
	if (err)
		return bad_rec(ps, RPT_REC_MODULE, "malformed field");
	if (bid > RPT_BUILD_ID_MAX || bid > (uint64_t)(c->end - c->p))
		return bad_rec(ps, RPT_REC_MODULE, "build-id of %" PRIu64 " bytes", bid);
	m.build_id_len = (uint32_t)bid;
	memcpy(m.build_id, c->p, m.build_id_len);
	c->p += m.build_id_len;
	err = rpt_cur__uv(c, &m.dev);
	err = err ?: rpt_cur__uv(c, &m.ino);
	/* Version 2: a source file's runtime (values past RPT_RT_MAX shown as unknown). */
	if (!err && m.kind == RPT_MOD_SOURCE && c->p < c->end)
		err = rpt_cur__u32(c, &m.runtime);
	if (err)
		return bad_rec(ps, RPT_REC_MODULE, "malformed field");
	if (path >= r->nr_strs)
		return bad_rec(ps, RPT_REC_MODULE, "path string %u out of range (%zu strings)",
			       path, r->nr_strs);
	if (r->nr_mods >= RPT_ID_LIMIT)
		return bad_rec(ps, RPT_REC_MODULE, "too many modules");
	m.path = r->strs[path];
	err = report__grow(r, (void **)&r->mods, &r->cap_mods, r->nr_mods + 1, sizeof(*r->mods));
	if (err)
		return err;
	r->mods[r->nr_mods++] = m;
	return 0;
}

static int parse_frame(struct parser *ps, struct rpt_cur *c)
{
	struct report *r = ps->r;
	struct rpt_frame f = {};
	uint64_t module, addr_delta, sym;
	int err;

	err = rpt_cur__u32(c, &f.kind);
	err = err ?: rpt_cur__uv(c, &module);
	err = err ?: rpt_cur__uv(c, &f.offset);
	err = err ?: rpt_cur__uv(c, &addr_delta);
	err = err ?: rpt_cur__uv(c, &sym);
	err = err ?: rpt_cur__uv(c, &f.sym_off);
	err = err ?: rpt_cur__u32(c, &f.reason);
	if (err)
		return bad_rec(ps, RPT_REC_FRAME, "malformed field");
	if (f.kind > (ps->version >= 2 ? RPT_FRAME_INTERP : RPT_FRAME_USER))
		return bad_rec(ps, RPT_REC_FRAME, "unknown kind %u", f.kind);
	if (module > r->nr_mods)
		return bad_rec(ps, RPT_REC_FRAME, "module %" PRIu64 " out of range (%zu modules)",
			       module - 1, r->nr_mods);
	/* Source modules are interpreter frames' and theirs only: views rely on it. */
	if (module && (r->mods[module - 1].kind == RPT_MOD_SOURCE) != (f.kind == RPT_FRAME_INTERP))
		return bad_rec(ps, RPT_REC_FRAME, "kind %u in a module of kind %u", f.kind,
			       r->mods[module - 1].kind);
	if (sym > r->nr_strs)
		return bad_rec(ps, RPT_REC_FRAME, "symbol string %" PRIu64 " out of range (%zu strings)",
			       sym - 1, r->nr_strs);
	if (r->nr_frames >= RPT_ID_LIMIT)
		return bad_rec(ps, RPT_REC_FRAME, "too many frames");
	f.module = module ? (uint32_t)(module - 1) : RPT_NONE;
	f.addr = f.offset + (uint64_t)rpt_zz_decode(addr_delta);
	f.sym = sym ? r->strs[sym - 1] : NULL;
	err = report__grow(r, (void **)&r->frames, &r->cap_frames, r->nr_frames + 1, sizeof(*r->frames));
	if (err)
		return err;
	r->frames[r->nr_frames++] = f;
	ps->waiting += f.reason == RPT_FILE_NO_ANSWER;
	return 0;
}

static int parse_stack(struct parser *ps, struct rpt_cur *c)
{
	struct report *r = ps->r;
	uint64_t nr, id;
	uint32_t i;
	int err;

	if (rpt_cur__uv(c, &nr))
		return bad_rec(ps, RPT_REC_STACK, "malformed field");
	/* Each id takes a byte at least: a bigger count is a lie, refused before allocating. */
	if (nr > (uint64_t)(c->end - c->p))
		return bad_rec(ps, RPT_REC_STACK, "%" PRIu64 " frames in %zu bytes",
			       nr, (size_t)(c->end - c->p));
	if (r->nr_stacks >= RPT_ID_LIMIT)
		return bad_rec(ps, RPT_REC_STACK, "too many stacks");
	err = report__grow(r, (void **)&r->stacks, &r->cap_stacks, r->nr_stacks + 1, sizeof(*r->stacks));
	err = err ?: report__grow(r, (void **)&r->stack_data, &r->cap_stack_data, r->nr_stack_data + nr,
				  sizeof(*r->stack_data));
	if (err)
		return err;
	for (i = 0; i < nr; i++) {
		if (rpt_cur__uv(c, &id))
			return bad_rec(ps, RPT_REC_STACK, "malformed frame id %u", i);
		if (id >= r->nr_frames)
			return bad_rec(ps, RPT_REC_STACK, "frame %" PRIu64 " out of range (%zu frames)",
				       id, r->nr_frames);
		r->stack_data[r->nr_stack_data + i] = (uint32_t)id;
	}
	r->stacks[r->nr_stacks++] = (struct rstack){ r->nr_stack_data, (uint32_t)nr };
	r->nr_stack_data += nr;
	return 0;
}

static int parse_sample(struct parser *ps, struct rpt_cur *c)
{
	struct report *r = ps->r;
	struct rpt_sample s = {};
	uint64_t dt, dtid;
	uint32_t comm;
	int64_t d;
	int err;

	err = rpt_cur__uv(c, &dt);
	err = err ?: rpt_cur__u32(c, &s.pid);
	err = err ?: rpt_cur__uv(c, &dtid);
	err = err ?: rpt_cur__u32(c, &s.cpu);
	err = err ?: rpt_cur__uv(c, &s.cgroup);
	err = err ?: rpt_cur__u32(c, &comm);
	err = err ?: rpt_cur__u32(c, &s.stack);
	if (err)
		return bad_rec(ps, RPT_REC_SAMPLE, "malformed field");
	d = rpt_zz_decode(dtid);
	if (d < -(int64_t)s.pid || d > (int64_t)UINT32_MAX - (int64_t)s.pid)
		return bad_rec(ps, RPT_REC_SAMPLE, "tid out of range");
	if (comm >= r->nr_strs)
		return bad_rec(ps, RPT_REC_SAMPLE, "comm string %u out of range (%zu strings)",
			       comm, r->nr_strs);
	if (s.stack >= r->nr_stacks)
		return bad_rec(ps, RPT_REC_SAMPLE, "stack %u out of range (%zu stacks)",
			       s.stack, r->nr_stacks);
	s.tid = (uint32_t)((int64_t)s.pid + d);
	s.time = ps->prev_time + (uint64_t)rpt_zz_decode(dt);
	s.comm = r->strs[comm];
	err = report__grow(r, (void **)&r->samples, &r->cap_samples, r->nr_samples + 1, sizeof(*r->samples));
	if (err)
		return err;
	r->samples[r->nr_samples++] = s;
	ps->prev_time = s.time;
	return 0;
}

static int parse_end(struct parser *ps, struct rpt_cur *c)
{
	struct rpt_header *h = &ps->r->hdr;

	if (rpt_end__read(c, h))
		return bad_rec(ps, RPT_REC_END, "malformed field");
	/* The writer counts its own SAMPLE records: a mismatch means records went missing. */
	if (h->samples != ps->r->nr_samples)
		return bad_rec(ps, RPT_REC_END, "counts %" PRIu64 " samples, the file holds %zu",
			       h->samples, ps->r->nr_samples);
	if (h->offcpu[RPT_OC_RECORDS] != ps->r->nr_offcpu)
		return bad_rec(ps, RPT_REC_END, "counts %" PRIu64 " OFFCPU records, the file holds %zu",
			       h->offcpu[RPT_OC_RECORDS], ps->r->nr_offcpu);
	ps->have_end = true;
	return 0;
}

/*
 * The file's records would take more memory than its size allows
 * (report__charge): refused as a bomb, at the record that crossed it.
 * Returns -EINVAL.
 */
static int past_bound(struct parser *ps, uint64_t type)
{
	char h1[32], h2[32];

	return bad_rec(ps, type, "past the reader's memory bound (%s for a file of %s)",
		       human(h1, sizeof(h1), ps->r->mem_max), human(h2, sizeof(h2), ps->r->file_bytes));
}

/*
 * A CGROUP record.  Its table counts its own bytes (paths too): they are
 * charged once the record is in, so the bound is passed by at most one
 * path and one growth of the table before the file is refused.
 */
static int parse_cgroup(struct parser *ps, struct rpt_cur *c)
{
	struct rpt_cgtab *t = &ps->r->cgroups;
	size_t before = t->bytes;
	const char *why;
	int err;

	err = rpt_cgtab__read(t, c, &why);
	if (err == -EINVAL)
		return bad_rec(ps, RPT_REC_CGROUP, "%s", why);
	return err ?: report__charge(ps->r, before, t->bytes);
}

/* Parse the @len decompressed bytes of the current block. */
static int parse_records(struct parser *ps, size_t len)
{
	const uint8_t *base = ps->data;
	struct rpt_cur c = { base, base + len };
	const char *why;
	int err;

	ps->prev_time = ps->prev_off_time = 0;
	while (c.p < c.end) {
		struct rpt_cur rc;
		uint64_t type, rlen;

		ps->rec_off = (size_t)(c.p - base);
		if (rpt_cur__uv(&c, &type) || rpt_cur__uv(&c, &rlen))
			return bad_rec(ps, 0, "malformed type or length");
		if (rlen > (uint64_t)(c.end - c.p))
			return bad_rec(ps, type, "%" PRIu64 " bytes long, %zu left in the block",
				       rlen, (size_t)(c.end - c.p));
		rc = (struct rpt_cur){ c.p, c.p + rlen };
		c.p += rlen;
		if (ps->have_end)
			return bad_rec(ps, type, "after the END record");
		if (!ps->have_header && type != RPT_REC_HEADER)
			return bad_rec(ps, type, "the first record must be HEADER");
		/* Fields a later minor revision appends after the known ones are skipped. */
		switch (type) {
		case RPT_REC_HEADER:
			err = parse_header(ps, &rc);
			break;
		case RPT_REC_STRING:
			err = parse_string(ps, &rc);
			break;
		case RPT_REC_MODULE:
			err = parse_module(ps, &rc);
			break;
		case RPT_REC_FRAME:
			err = parse_frame(ps, &rc);
			break;
		case RPT_REC_STACK:
			err = parse_stack(ps, &rc);
			break;
		case RPT_REC_SAMPLE:
			err = parse_sample(ps, &rc);
			break;
		case RPT_REC_END:
			err = parse_end(ps, &rc);
			break;
		case RPT_REC_CGROUP:
			err = parse_cgroup(ps, &rc);
			break;
		case RPT_REC_FORGET:
			ps->forgets++;
			err = 0;
			break;
		case RPT_REC_OFFCPU:
			err = rpt_offcpu__read(ps->r, &rc, &ps->prev_off_time, &why);
			if (err == -EINVAL)
				return bad_rec(ps, type, "%s", why);
			break;
		default:
			if (type < RPT_REC_OPTIONAL)
				return bad_rec(ps, type, "type %" PRIu64 " is not optional (>= %d)",
					       type, RPT_REC_OPTIONAL);
			err = 0;
			break;
		}
		if (err == -E2BIG)
			return past_bound(ps, type);
		if (err == -ENOMEM)
			set_err(ps, "out of memory");
		if (err)
			return err;
	}
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/*
 * Decompress and parse the block at ps->block_off, whose header has been
 * checked.  *@dbuf is the reused output buffer of *@dcap bytes.
 */
static int parse_block(struct parser *ps, ZSTD_DCtx *dctx, const uint8_t *frame, uint32_t clen,
		       uint32_t ulen, uint8_t **dbuf, size_t *dcap)
{
	uint64_t foff = ps->block_off + RPT_BLOCK_HDR_LEN;
	unsigned long long fcs;
	char h1[32], h2[32], h3[32];
	size_t n;
	int err;

	fcs = ZSTD_getFrameContentSize(frame, clen);
	if (fcs == ZSTD_CONTENTSIZE_ERROR)
		return bad_at(ps, foff, "not a zstd frame");
	if (fcs == ZSTD_CONTENTSIZE_UNKNOWN)
		return bad_at(ps, foff, "zstd frame does not declare its size");
	if (fcs != ulen)
		return bad_at(ps, foff, "zstd frame claims %llu bytes, the block header %u", fcs, ulen);
	/* A regular frame (a skippable one claims 0 bytes): byte 4 is its descriptor. */
	if (!(frame[4] & 0x04))
		return bad_at(ps, foff, "zstd frame has no checksum");
	n = ZSTD_findFrameCompressedSize(frame, clen);
	if (ZSTD_isError(n) || n != clen)
		return bad_at(ps, foff, "zstd frame does not fill the %u-byte block", clen);
	err = report__grow(ps->r, (void **)dbuf, dcap, ulen, 1);
	if (err == -E2BIG)
		return bad_at(ps, ps->block_off, "a block of %s: past the reader's memory bound "
			      "(%s for a file of %s)", human(h1, sizeof(h1), ulen),
			      human(h2, sizeof(h2), ps->r->mem_max), human(h3, sizeof(h3), ps->r->file_bytes));
	if (err) {
		set_err(ps, "out of memory");
		return err;
	}
	/* Bounded: the frame said ulen, checked against the cap, and the buffer is that big. */
	n = ZSTD_decompressDCtx(dctx, *dbuf, ulen, frame, clen);
	if (ZSTD_isError(n))
		return bad_at(ps, foff, "zstd: %s", ZSTD_getErrorName(n));
	if (n != ulen)
		return bad_at(ps, foff, "zstd frame gave %zu bytes, expected %u", n, ulen);
	ps->data = *dbuf;
	return parse_records(ps, ulen);
}

/* The file header: magic, version, feature flags.  0 or -EINVAL. */
static int check_file_header(struct parser *ps, const uint8_t *buf, size_t len)
{
	if (len == 0)
		return bad_at(ps, 0, "empty file");
	if (len < RPT_FILE_HDR_LEN || memcmp(buf, RPT_FILE_MAGIC, RPT_MAGIC_LEN))
		return bad_at(ps, 0, "not a bpfsym report (bad magic)");
	ps->version = rpt_get_le32(buf + 8);
	if (ps->version < RPT_VERSION_MIN || ps->version > RPT_VERSION)
		return bad_at(ps, 8, "unsupported version %u (this bpfsym reads versions %d to %d)",
			      ps->version, RPT_VERSION_MIN, RPT_VERSION);
	if (rpt_get_le32(buf + 12))
		return bad_at(ps, 12, "unknown feature flags 0x%x", rpt_get_le32(buf + 12));
	return 0;
}

/*
 * The header of the block at ps->block_off, @p, with @left bytes of the
 * file from there: 1 with its lengths in *@clen and *@ulen when the whole
 * block follows, 0 when the file ends here, -EINVAL when it is damaged.
 */
static int block_header(struct parser *ps, const uint8_t *p, size_t left, uint32_t *clen,
			uint32_t *ulen)
{
	uint64_t off = ps->block_off;
	char h1[32], h2[32];
	bool c;

	if (ps->have_end)
		return bad_at(ps, off, "%zu bytes after the END record", left);
	/*
	 * A block cut short is what a killed writer leaves: stop there.  So
	 * is a zero-filled tail (a crash after the size grew).  A whole
	 * header that is wrong is damage, not truncation.
	 */
	if (left < RPT_BLOCK_HDR_LEN)
		return 0;
	if (rpt_get_le32(p) != RPT_BLOCK_MAGIC || rpt_get_le32(p + 12) != rpt_block_check(p)) {
		if (all_zero(p, left))
			return 0;
		return bad_at(ps, off, "bad block header (%s)",
			      rpt_get_le32(p) != RPT_BLOCK_MAGIC ? "magic" : "check");
	}
	*clen = rpt_get_le32(p + 4);
	*ulen = rpt_get_le32(p + 8);
	if (*clen > RPT_BLOCK_MAX || *ulen > RPT_BLOCK_MAX) {
		c = *clen > RPT_BLOCK_MAX;
		return bad_at(ps, off, "block claims %s %s (cap %s)",
			      human(h1, sizeof(h1), c ? *clen : *ulen),
			      c ? "compressed" : "uncompressed", human(h2, sizeof(h2), RPT_BLOCK_MAX));
	}
	if (!*clen || !*ulen)
		return bad_at(ps, off, "empty block");
	return *clen <= left - RPT_BLOCK_HDR_LEN;
}

static int parse_file(struct parser *ps, const uint8_t *buf, size_t len)
{
	uint64_t total = 0, total_max, off;
	ZSTD_DCtx *dctx = NULL;
	uint8_t *dbuf = NULL;
	size_t dcap = 0;
	uint32_t clen, ulen;
	char h[32];
	int err;

	err = check_file_header(ps, buf, len);
	if (err)
		return err;
	total_max = (uint64_t)len * RPT_RATIO_MAX + RPT_RATIO_FLOOR;
	ps->r->file_bytes = len;
	ps->r->mem_max = (size_t)(len * RPT_MEM_RATIO + RPT_MEM_FLOOR);
	ps->r->mem = sizeof(*ps->r);
	dctx = ZSTD_createDCtx();
	if (!dctx) {
		set_err(ps, "out of memory");
		return -ENOMEM;
	}
	for (off = RPT_FILE_HDR_LEN; off < len; ps->block++) {
		ps->block_off = off;
		err = block_header(ps, buf + off, len - (size_t)off, &clen, &ulen);
		if (err <= 0)
			break;
		total += ulen;
		if (total > total_max) {
			err = bad_at(ps, off, "more than %s of records from a %zu-byte file",
				     human(h, sizeof(h), total_max), len);
			break;
		}
		err = parse_block(ps, dctx, buf + off + RPT_BLOCK_HDR_LEN, clen, ulen, &dbuf, &dcap);
		if (err)
			break;
		off += RPT_BLOCK_HDR_LEN + clen;
	}
	if (!err && !ps->have_header)
		err = bad_at(ps, RPT_FILE_HDR_LEN, "no complete block: the file ends before its header");
	ZSTD_freeDCtx(dctx);
	free(dbuf);
	ps->r->mem -= dcap;
	return err;
}

static struct report *report__parse(const void *data, size_t len, const char *path,
				    char *err, size_t errlen)
{
	struct parser ps = { .path = path, .err = err, .errlen = errlen };
	int e;

	if (err && errlen)
		err[0] = '\0';
	ps.r = calloc(1, sizeof(*ps.r));
	if (!ps.r) {
		set_err(&ps, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	e = parse_file(&ps, data, len);
	if (!e && path && !(ps.r->source = strdup(path))) {
		set_err(&ps, "out of memory");
		e = -ENOMEM;
	}
	if (e) {
		report__free(ps.r);
		errno = -e;
		return NULL;
	}
	ps.r->hdr.complete = ps.have_end;
	if (!ps.have_end) {
		/* What a killed recorder left: the counters never reached the file. */
		ps.r->hdr.end_wall_ns = 0;
		ps.r->hdr.samples = ps.r->nr_samples;
		ps.r->hdr.offcpu[RPT_OC_RECORDS] = ps.r->nr_offcpu;
	}
	/*
	 * The views count by stack id: one id per identity again.  A frame
	 * written before its file answered may be there twice, unnamed then
	 * named: merged, the name wins (docs/FORMAT.md), so each file reads
	 * as the files merged do.
	 */
	if ((ps.forgets || ps.waiting) && (e = report__dedupe(ps.r))) {
		char h1[32], h2[32];

		/* Past the bound (a file of FORGET records made to be indexed again): corrupt input. */
		if (e == -E2BIG)
			e = bad_at(&ps, len, "indexing the file again (FORGET records) passes the reader's "
				   "memory bound (%s for a file of %s)", human(h1, sizeof(h1), ps.r->mem_max),
				   human(h2, sizeof(h2), len));
		else
			set_err(&ps, "%s", e == -ENOMEM ? "out of memory" : strerror(-e));
		report__free(ps.r);
		errno = -e;
		return NULL;
	}
	return ps.r;
}

struct report *report__open_mem(const void *data, size_t len, char *err, size_t errlen)
{
	if (!data && len) {
		errno = EINVAL;
		return NULL;
	}
	return report__parse(data ? data : "", len, NULL, err, errlen);
}

/*
 * All of @fd, sized by fstat so a regular file is read in one allocation;
 * a pipe or device (stdin) read to its end under the same cap.
 */
static int read_whole_fd(int fd, uint8_t **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	uint8_t *p;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return read_fd_capped(fd, (size_t)RPT_FILE_MAX, (char **)buf, len);
	if ((uint64_t)st.st_size > RPT_FILE_MAX)
		return -EFBIG;
	p = malloc((size_t)st.st_size + 1);
	if (!p)
		return -ENOMEM;
	/* A recording still being written may grow meanwhile: read what stat saw. */
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, p + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(p);
			return err;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*buf = p;
	*len = got;
	return 0;
}

/* Read all of @fd (named @name in messages) and parse it; report__open()'s result. */
static struct report *open_fd(int fd, const char *name, char *err, size_t errlen)
{
	struct parser ps = { .path = name, .err = err, .errlen = errlen };
	struct report *r;
	uint8_t *buf;
	size_t len;
	int e;

	e = read_whole_fd(fd, &buf, &len);
	if (e) {
		char h[32];

		if (e == -EFBIG || e == -E2BIG)
			set_err(&ps, "larger than the %s a report may be",
				human(h, sizeof(h), RPT_FILE_MAX));
		else
			set_err(&ps, "%s", strerror(-e));
		errno = -e;
		return NULL;
	}
	r = report__parse(buf, len, name, err, errlen);
	e = errno;
	free(buf);
	errno = e;
	return r;
}

struct report *report__open_fd(int fd, const char *name, char *err, size_t errlen)
{
	if (fd < 0 || !name) {
		errno = EINVAL;
		return NULL;
	}
	return open_fd(fd, name, err, errlen);
}

struct report *report__open(const char *path, char *err, size_t errlen)
{
	struct parser ps = { .path = path, .err = err, .errlen = errlen };
	struct report *r;
	int fd, e;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		set_err(&ps, "%s", strerror(e));
		errno = e;
		return NULL;
	}
	r = open_fd(fd, path, err, errlen);
	e = errno;
	close(fd);
	errno = e;
	return r;
}
