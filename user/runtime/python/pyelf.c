// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyelf: the version tables and the checks that a binary agrees with
 * them (pyelf.h).  The numbers are CPython's (offsetof() on the
 * v3.11.2/v3.11.7, v3.12.1 and v3.13.0 headers, Py_BUILD_CORE), checked
 * at probe time against what the binary itself says:
 *   - PyCode_Type: tp_name is "code", tp_basicsize is
 *     offsetof(PyCodeObject, co_code_adaptive) and tp_itemsize 2
 *     (Objects/codeobject.c), and its tp_members (PyMemberDef) give the
 *     offsets of co_firstlineno, co_filename, co_name, co_qualname and
 *     co_linetable where the version lists them;
 *   - 3.13: _Py_DebugOffsets, the first field of _PyRuntime, written for
 *     out-of-process debuggers: cookie, version, not free-threaded, and
 *     every offset the walk and the code reader use.
 * The thread and frame offsets of 3.11 and 3.12 have no such witness in
 * the binary: the table is all there is (the lead's BPF walk checks what
 * it reads: a code object's type, a thread id).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "runtime/python/pyelf.h"
#include "runtime/python/pyelf_int.h"

#define N PY_OFF_NONE

static const struct py_layout tables[] = {
	{	/* 3.11 */
		.minor = 11,
		.rt_interp_head = 40, .interp_next = 0, .interp_threads_head = 16,
		.ts_next = 8, .ts_native_tid = 160, .ts_thread_id = 152,
		.ts_cframe = 56, .cframe_frame = 8, .ts_frame = N,
		.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_is_entry = 68, .fr_owner = 69,
		.owner_cstack = N, .owner_generator = 1,
		.co_code_adaptive = 184, .co_firsttraceable = 168, .co_firstlineno = 72,
		.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
		.ob_type = 8, .bytes_size = 16, .bytes_sval = 32, .str_length = 16, .str_state = 32,
		.str_ascii_size = 48, .str_compact_size = 72, .str_data = 72,
	},
	{	/* 3.12 */
		.minor = 12,
		.rt_interp_head = 40, .interp_next = 0, .interp_threads_head = 72,
		.ts_next = 8, .ts_native_tid = 144, .ts_thread_id = 136,
		.ts_cframe = 56, .cframe_frame = 0, .ts_frame = N,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_is_entry = N, .fr_owner = 70,
		.owner_cstack = 3, .owner_generator = 1,
		.co_code_adaptive = 192, .co_firsttraceable = 176, .co_firstlineno = 68,
		.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
		.ob_type = 8, .bytes_size = 16, .bytes_sval = 32, .str_length = 16, .str_state = 32,
		.str_ascii_size = 40, .str_compact_size = 56, .str_data = 56,
	},
	{	/* 3.13 */
		.minor = 13,
		.rt_interp_head = 632, .interp_next = 7264, .interp_threads_head = 7344,
		.ts_next = 8, .ts_native_tid = 160, .ts_thread_id = 152,
		.ts_cframe = N, .cframe_frame = N, .ts_frame = 72,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_is_entry = N, .fr_owner = 70,
		.owner_cstack = 3, .owner_generator = 1,
		.co_code_adaptive = 200, .co_firsttraceable = 184, .co_firstlineno = 68,
		.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
		.ob_type = 8, .bytes_size = 16, .bytes_sval = 32, .str_length = 16, .str_state = 32,
		.str_ascii_size = 40, .str_compact_size = 56, .str_data = 56,
	},
};

#undef N

static const char *const miss_str[PY_MISS__NR] = {
	[PY_MISS_NONE] = "none",
	[PY_MISS_NOT_ELF] = "not an x86-64 ELF file",
	[PY_MISS_NOT_PYTHON] = "not a CPython interpreter",
	[PY_MISS_VERSION] = "version not supported",
	[PY_MISS_SYMBOLS] = "interpreter symbols missing",
	[PY_MISS_CHECK] = "binary disagrees with the version's offsets",
	[PY_MISS_CAP] = "table over its cap",
};

const char *pyelf__miss_str(enum py_miss why)
{
	return (unsigned)why < PY_MISS__NR ? miss_str[why] : NULL;
}

int pyelf__table(uint32_t version, struct py_layout *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (version >> 24 != 3)
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(tables); i++)
		if (tables[i].minor == ((version >> 16) & 0xff)) {
			*out = tables[i];
			out->version = version;
			return 0;
		}
	return -ENOENT;
}

/* PyTypeObject and PyMemberDef, as every supported version lays them out. */
#define TP_NAME		24
#define TP_BASICSIZE	32
#define TP_ITEMSIZE	40
#define TP_MEMBERS	240
#define TP_SIZE		(TP_MEMBERS + 8)
#define MEMBERDEF_SIZE	40	/* name, int type, Py_ssize_t offset, int flags, doc */
#define MAX_MEMBERS	64
#define T_INT		1
#define T_OBJECT	6
#define T_OBJECT_EX	16

/* One co_* member a version's PyCode_Type lists, and what the table says of it. */
struct member_check {
	const char *name;
	uint16_t off;
	int is_int;
	int seen;
};

static int check_member(struct member_check *mc, size_t nr, const char *name, int32_t type,
			int64_t off)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (strcmp(mc[i].name, name))
			continue;
		mc[i].seen = 1;
		if (off != mc[i].off)
			return -1;
		if (mc[i].is_int ? type != T_INT : type != T_OBJECT && type != T_OBJECT_EX)
			return -1;
	}
	return 0;
}

/* Walk tp_members at @arr: every listed co_* member at its table offset, the ones we need seen. */
static int check_members(const struct pyelf_file *f, uint64_t arr, const struct py_layout *l,
			 enum py_miss *why)
{
	struct member_check mc[] = {
		{ "co_firstlineno", l->co_firstlineno, 1, 0 },
		{ "co_filename", l->co_filename, 0, 0 },
		{ "co_name", l->co_name, 0, 0 },
		{ "co_qualname", l->co_qualname, 0, 0 },
		{ "co_linetable", l->co_linetable, 0, 0 },
	};
	struct pyelf_relocs *r;
	size_t i;
	int err;

	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->lo = arr;
	r->hi = arr + MAX_MEMBERS * MEMBERDEF_SIZE;
	err = r->hi < arr ? -ENOEXEC : pyelf_file__relocs(f, r);
	for (i = 0; !err && i < MAX_MEMBERS; i++) {
		uint64_t at = arr + i * MEMBERDEF_SIZE, name;
		uint8_t md[MEMBERDEF_SIZE];
		int32_t type;
		int64_t off;
		char s[32];

		err = pyelf_file__ptr(f, r, at, &name);
		if (err || !name)
			break;
		err = pyelf_file__vread(f, at, md, sizeof(md));
		if (err)
			break;
		memcpy(&type, md + 8, sizeof(type));
		memcpy(&off, md + 16, sizeof(off));
		if (pyelf_file__vstr(f, name, s, sizeof(s)))
			continue;	/* a long name: not one of ours */
		if (check_member(mc, ARRAY_SIZE(mc), s, type, off)) {
			pr_debug("pyelf: '%s': PyCode_Type's %s at %lld, type %d: not the table's\n",
				 f->name, s, (long long)off, type);
			*why = PY_MISS_CHECK;
		}
	}
	free(r);
	if (err == -EIO || err == -ENOMEM)
		return err;
	/* 3.11-3.13 list all five (Objects/codeobject.c, code_memberlist). */
	for (i = 0; !*why && i < ARRAY_SIZE(mc); i++)
		if (!mc[i].seen) {
			pr_debug("pyelf: '%s': PyCode_Type lists no %s\n", f->name, mc[i].name);
			*why = PY_MISS_CHECK;
		}
	if (err && !*why)
		*why = PY_MISS_CHECK;
	return 0;
}

/* PyCode_Type itself: its name, basic and item sizes, then its members. */
static int check_code_type(const struct pyelf_file *f, const struct py_layout *l, enum py_miss *why)
{
	struct pyelf_relocs r = { .lo = l->code_type, .hi = l->code_type + TP_SIZE };
	uint64_t name, members, basic, item;
	char s[8];
	int err;

	err = pyelf_file__relocs(f, &r);
	if (!err)
		err = pyelf_file__ptr(f, &r, l->code_type + TP_NAME, &name);
	if (!err)
		err = pyelf_file__ptr(f, &r, l->code_type + TP_MEMBERS, &members);
	if (!err)
		err = pyelf_file__vread(f, l->code_type + TP_BASICSIZE, &basic, sizeof(basic));
	if (!err)
		err = pyelf_file__vread(f, l->code_type + TP_ITEMSIZE, &item, sizeof(item));
	if (!err)
		err = pyelf_file__vstr(f, name, s, sizeof(s));
	if (err == -EIO || err == -ENOMEM || err == -E2BIG)
		return err;
	if (err || strcmp(s, "code") || basic != l->co_code_adaptive || item != 2) {
		pr_debug("pyelf: '%s': PyCode_Type is not the table's (basicsize %llu)\n", f->name,
			 err ? 0ull : (unsigned long long)basic);
		*why = PY_MISS_CHECK;
		return 0;
	}
	return check_members(f, members, l, why);
}

/* _Py_DebugOffsets (3.13): where each field sits, in uint64_t words. */
struct dbg_field {
	size_t at;
	uint16_t want;
};

static int check_debug_offsets(const struct pyelf_file *f, const struct py_layout *l,
			       enum py_miss *why)
{
	const struct dbg_field fields[] = {
		{ 40, l->rt_interp_head }, { 64, l->interp_next }, { 72, l->interp_threads_head },
		{ 168, l->ts_next }, { 184, l->ts_frame }, { 192, l->ts_thread_id },
		{ 200, l->ts_native_tid },
		{ 232, l->fr_previous }, { 240, l->fr_code }, { 248, l->fr_instr },
		{ 264, l->fr_owner }, { 280, l->co_filename }, { 288, l->co_name },
		{ 296, l->co_qualname }, { 304, l->co_linetable }, { 312, l->co_firstlineno },
		{ 344, l->co_code_adaptive }, { 360, l->ob_type }, { 520, l->bytes_size },
		{ 528, l->bytes_sval }, { 544, l->str_state }, { 552, l->str_length },
		{ 560, l->str_ascii_size },
	};
	uint64_t d[584 / 8];
	size_t i;
	int err;

	err = pyelf_file__vread(f, l->runtime, d, sizeof(d));
	if (err == -EIO)
		return err;
	if (err || memcmp(d, "xdebugpy", 8) || d[1] != l->version) {
		pr_debug("pyelf: '%s': no _Py_DebugOffsets of this version\n", f->name);
		*why = PY_MISS_CHECK;
		return 0;
	}
	if (d[2]) {
		pr_debug("pyelf: '%s': a free-threaded build\n", f->name);
		*why = PY_MISS_VERSION;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		if (d[fields[i].at / 8] != fields[i].want) {
			pr_debug("pyelf: '%s': _Py_DebugOffsets word %zu is %llu, the table's %u\n",
				 f->name, fields[i].at / 8, (unsigned long long)d[fields[i].at / 8],
				 fields[i].want);
			*why = PY_MISS_CHECK;
			return 0;
		}
	return 0;
}

enum { W_RUNTIME, W_VERSION, W_EVAL, W_CODE_TYPE, W_STR_TYPE, W_BYTES_TYPE, W__NR };

/* The symbols, then the version they say, then the table for it. */
static int find_interp(const struct pyelf_file *f, struct py_layout *out, enum py_miss *why)
{
	struct pyelf_want w[W__NR] = {
		[W_RUNTIME] = { .name = "_PyRuntime" },
		[W_VERSION] = { .name = "Py_Version" },
		[W_EVAL] = { .name = "_PyEval_EvalFrameDefault" },
		[W_CODE_TYPE] = { .name = "PyCode_Type" },
		[W_STR_TYPE] = { .name = "PyUnicode_Type" },
		[W_BYTES_TYPE] = { .name = "PyBytes_Type" },
	};
	uint64_t version;
	int err;

	err = pyelf_file__symbols(f, w, W__NR);
	if (err)
		return err;
	if (!w[W_RUNTIME].found) {
		*why = PY_MISS_NOT_PYTHON;
		return 0;
	}
	/* Py_Version is exported since 3.11: an interpreter without it is older. */
	if (!w[W_VERSION].found || w[W_VERSION].size != 8 ||
	    pyelf_file__vread(f, w[W_VERSION].value, &version, sizeof(version)) ||
	    version > UINT32_MAX || pyelf__table((uint32_t)version, out)) {
		out->version = w[W_VERSION].found ? (uint32_t)version : 0;
		*why = PY_MISS_VERSION;
		return 0;
	}
	/* An address 0 is no object: and 0 is what the BPF side reads as "none". */
	if (!w[W_EVAL].found || !w[W_EVAL].size || !w[W_EVAL].value || !w[W_RUNTIME].value ||
	    !w[W_CODE_TYPE].found || w[W_CODE_TYPE].size < TP_SIZE || !w[W_CODE_TYPE].value ||
	    !w[W_STR_TYPE].found || !w[W_STR_TYPE].value || !w[W_BYTES_TYPE].found ||
	    !w[W_BYTES_TYPE].value) {
		*why = PY_MISS_SYMBOLS;
		return 0;
	}
	out->runtime = w[W_RUNTIME].value;
	out->eval_start = w[W_EVAL].value;
	out->eval_size = w[W_EVAL].size;
	out->code_type = w[W_CODE_TYPE].value;
	out->str_type = w[W_STR_TYPE].value;
	out->bytes_type = w[W_BYTES_TYPE].value;
	return 0;
}

static int probe(const struct pyelf_file *f, struct py_layout *out, enum py_miss *why)
{
	int err = find_interp(f, out, why);

	if (!err && !*why)
		err = check_code_type(f, out, why);
	if (!err && !*why && out->minor >= 13)
		err = check_debug_offsets(f, out, why);
	return err;
}

int pyelf__probe(int fd, const char *name, struct py_layout *out, enum py_miss *why)
{
	struct pyelf_file f = { .fd = fd, .name = name ? name : "?" };
	uint32_t version, minor;
	int err;

	memset(out, 0, sizeof(*out));
	*why = PY_MISS_NONE;
	err = pyelf_file__open(&f);
	if (err == -ENOEXEC)
		*why = PY_MISS_NOT_ELF;
	else if (err == -E2BIG)
		*why = PY_MISS_CAP;
	if (err)
		return *why ? -ENOENT : err;
	err = probe(&f, out, why);
	pyelf_file__close(&f);
	if (err == -ENOEXEC)
		*why = PY_MISS_NOT_ELF;
	else if (err == -E2BIG)
		*why = PY_MISS_CAP;
	else if (err)
		return err;
	if (!*why)
		return 0;
	version = out->version;
	minor = out->minor;
	memset(out, 0, sizeof(*out));
	out->version = version;
	out->minor = minor;
	pr_debug("pyelf: '%s': %s\n", f.name, pyelf__miss_str(*why));
	return -ENOENT;
}

int pyelf__bias(int fd, uint64_t pgoff, uint64_t start, uint64_t *bias)
{
	struct pyelf_file f = { .fd = fd, .name = "?" };
	int err = pyelf_file__open(&f);
	size_t i;

	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < f.nph && err; i++) {
		const Elf64_Phdr *p = &f.ph[i];

		/* x86-64 maps in 4 KiB pages: the segment's first page is at @pgoff. */
		if (p->p_type != PT_LOAD || (p->p_offset & ~0xfffull) != pgoff)
			continue;
		*bias = start - (p->p_vaddr - (p->p_offset - pgoff));
		err = 0;
	}
	pyelf_file__close(&f);
	return err;
}
