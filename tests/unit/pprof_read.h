/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A pprof file read back for the tests that check what --pprof writes:
 * gunzipped (the gzip magic insisted on) and decoded with protobuf-c's
 * generated unpacker.  After test.h; needs <zlib.h> and profile.pb-c.h.
 */
#ifndef BPFSYM_PPROF_READ_H
#define BPFSYM_PPROF_READ_H

typedef Perftools__Profiles__Profile pb_profile;

/* The profile in the gzipped file @path (free_unpacked by the caller); NULL, a failure, when it is not one. */
static __attribute__((unused)) pb_profile *decode(const char *path)
{
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap), magic[2] = { 0 };
	pb_profile *p = NULL;
	FILE *f = fopen(path, "rb");
	gzFile gz;
	int n;

	if (!ASSERT_OK_PTR(f, "fopen") || !ASSERT_OK_PTR(buf, "malloc")) {
		free(buf);
		if (f)
			fclose(f);
		return NULL;
	}
	/* gzread() passes plain data through: insist on the gzip magic. */
	ASSERT_EQ(fread(magic, 1, 2, f), (size_t)2, "read magic");
	fclose(f);
	if (!ASSERT_TRUE(magic[0] == 0x1f && magic[1] == 0x8b, "gzip magic"))
		goto out;
	gz = gzopen(path, "rb");
	if (!ASSERT_OK_PTR(gz, "gzopen"))
		goto out;
	while ((n = gzread(gz, buf + len, (unsigned int)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap) {
			uint8_t *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!ASSERT_OK_PTR(nb, "profile under 64 MiB"))
				break;
			buf = nb;
			cap *= 2;
		}
	}
	ASSERT_EQ(n, 0, "gzread to the end");
	ASSERT_EQ(gzclose(gz), Z_OK, "gzip trailer (crc, length)");
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	ASSERT_OK_PTR(p, "protobuf-c unpack");
out:
	free(buf);
	return p;
}

static __attribute__((unused)) const char *str(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "<out of range>";
}

#endif /* BPFSYM_PPROF_READ_H */
