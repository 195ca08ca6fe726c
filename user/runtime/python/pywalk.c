// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pywalk: the reference walk of a thread's Python frames (pywalk.h).
 */
#include <errno.h>
#include <string.h>

#include "runtime/python/pywalk.h"

static int read_ptr(py_read_fn read, void *ctx, uint64_t addr, uint64_t *val)
{
	return read(ctx, addr, val, sizeof(*val));
}

int pywalk__thread_state(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
			 uint32_t tid, uint64_t *ts)
{
	uint64_t interp, id;
	int i, k, err;

	err = read_ptr(read, ctx, l->runtime + bias + l->rt_interp_head, &interp);
	for (i = 0; !err && interp && i < PYWALK_MAX_INTERPS; i++) {
		err = read_ptr(read, ctx, interp + l->interp_threads_head, ts);
		for (k = 0; !err && *ts && k < PYWALK_MAX_THREADS; k++) {
			err = read_ptr(read, ctx, *ts + l->ts_native_tid, &id);
			if (!err && id == tid)
				return 0;
			if (!err)
				err = read_ptr(read, ctx, *ts + l->ts_next, ts);
		}
		if (!err)
			err = read_ptr(read, ctx, interp + l->interp_next, &interp);
	}
	return err ? err : -ESRCH;
}

/* The thread's current _PyInterpreterFrame, in *@frame. */
static int current_frame(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t ts,
			 uint64_t *frame)
{
	uint64_t cframe;
	int err;

	if (l->ts_frame != PY_OFF_NONE)
		return read_ptr(read, ctx, ts + l->ts_frame, frame);
	err = read_ptr(read, ctx, ts + l->ts_cframe, &cframe);
	if (err || !cframe) {
		*frame = 0;
		return err;
	}
	return read_ptr(read, ctx, cframe + l->cframe_frame, frame);
}

/* One frame's fields: 0 and *@f filled, 1 for a shim (3.12+), or an error. */
static int read_frame(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		      uint64_t frame, struct py_frame *f, uint64_t *previous)
{
	uint8_t h[80];
	uint64_t instr, type;
	int64_t units;
	int32_t first, traceable;
	int err;

	err = read(ctx, frame, h, sizeof(h));
	if (err)
		return err;
	memcpy(previous, h + l->fr_previous, 8);
	if (l->owner_cstack != PY_OFF_NONE && h[l->fr_owner] == l->owner_cstack)
		return 1;
	memcpy(&f->code, h + l->fr_code, 8);
	memcpy(&instr, h + l->fr_instr, 8);
	f->entry = l->fr_is_entry != PY_OFF_NONE && h[l->fr_is_entry];
	err = read_ptr(read, ctx, f->code + l->ob_type, &type);
	if (!err && type != l->code_type + bias)
		err = -EINVAL;
	if (!err)
		err = read(ctx, f->code + l->co_firstlineno, &first, sizeof(first));
	if (!err)
		err = read(ctx, f->code + l->co_firsttraceable, &traceable, sizeof(traceable));
	if (err)
		return err;
	f->firstlineno = (uint32_t)first;
	units = (int64_t)(instr - (f->code + l->co_code_adaptive)) / 2;
	f->index = units < 0 || units >= PY_INDEX_BEFORE ? PY_INDEX_BEFORE : (uint32_t)units;
	f->incomplete = h[l->fr_owner] != l->owner_generator && units < traceable;
	return 0;
}

int pywalk__thread(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		   uint32_t tid, struct py_frame *out, size_t max, size_t *nr)
{
	uint64_t ts, frame, previous = 0;
	size_t steps;
	int err;

	*nr = 0;
	err = pywalk__thread_state(read, ctx, l, bias, tid, &ts);
	if (!err)
		err = current_frame(read, ctx, l, ts, &frame);
	/* Shims count as steps too: a cycle in hostile memory still ends. */
	for (steps = 0; !err && frame && *nr < max && steps < 2 * max + 1; steps++) {
		err = read_frame(read, ctx, l, bias, frame, &out[*nr], &previous);
		if (err == 1) {
			if (*nr)
				out[*nr - 1].entry = true;
			err = 0;
		} else if (!err) {
			(*nr)++;
		}
		frame = previous;
	}
	return err;
}
