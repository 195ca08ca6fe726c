/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pywalk: a thread's Python frames, walked in user space through a read
 * callback, exactly as the BPF walker is to walk them (the chain of reads
 * below), so the chain and the layout's numbers are tested against live
 * interpreters here and the BPF walk has a reference to be compared
 * with.  Not on a sampling path: the recorder reads frames in BPF.
 *
 * The chain, for the thread whose native id is @tid, every pointer read
 * checked for NULL and every loop bounded:
 *   interp = *(_PyRuntime + bias + rt_interp_head)
 *   for each interp (interp = *(interp + interp_next)):
 *     for ts = *(interp + interp_threads_head); ts; ts = *(ts + ts_next):
 *       if *(unsigned long *)(ts + ts_native_tid) == tid: found
 *       (or, as bpf/python.bpf.h does, *(ts + ts_thread_id) == the
 *       thread's pthread_self(), its fs base)
 *   frame = 3.13: *(ts + ts_frame)
 *           3.11/3.12: *(*(ts + ts_cframe) + cframe_frame)
 *   for (; frame; frame = *(frame + fr_previous)):
 *     3.12+: a frame whose byte at fr_owner is owner_cstack is the shim
 *            _PyEval_EvalFrameDefault pushed on entry: not a Python frame;
 *            the frame before it in this walk was its invocation's first
 *     code = *(frame + fr_code); its ob_type must be PyCode_Type + bias
 *     index = (*(frame + fr_instr) - (code + co_code_adaptive)) / 2
 *             (negative, 3.11's prev_instr before the first: PY_INDEX_BEFORE)
 *     firstlineno = *(int *)(code + co_firstlineno)
 *     3.11: the byte at fr_is_entry says this frame is its invocation's first
 *     incomplete (still in its prologue, before RESUME): owner is not
 *     owner_generator and index < *(int *)(code + co_firsttraceable)
 *     (signed: 3.11's -1 too); sys._current_frames() skips such frames
 * Each invocation of _PyEval_EvalFrameDefault on the native stack runs
 * one run of frames: leaf first, up to the one marked entry.  The BPF
 * walk emits, where the native walk meets the eval function's n-th frame
 * (leaf first), the n-th run.
 */
#ifndef BPFSYM_PYWALK_H
#define BPFSYM_PYWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/python/pycode.h"

/* Bounds of the walk: interpreters, threads per interpreter. */
#define PYWALK_MAX_INTERPS	16
#define PYWALK_MAX_THREADS	4096

struct py_frame {
	uint64_t code;		/* the code object's address: BPFSYM_FK_PYTHON slot 0 */
	uint32_t firstlineno;	/* slot 1, high half */
	uint32_t index;		/* slot 1, low half: the instruction, in code units */
	bool entry;		/* the first frame of its _PyEval_EvalFrameDefault invocation */
	bool incomplete;	/* not started: CPython's own views skip it (_PyFrame_IsIncomplete) */
};

/*
 * The PyThreadState of the thread whose native id is @tid, in *@ts (the
 * chain's first part): 0, -ESRCH (none has that id), or @read's error.
 */
int pywalk__thread_state(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
			 uint32_t tid, uint64_t *ts);

/*
 * The Python frames of the thread whose native id is @tid in the process
 * @read reads, its interpreter described by @l loaded at @bias: leaf
 * first, at most @max into @out, their number in *@nr.  0 (a thread found
 * with no frame: *@nr 0); -ESRCH when no thread state has that id (not a
 * Python thread, or it has not said its id yet); -EINVAL when a frame's
 * code is not a code object (the walk stops there, *@nr the frames
 * before it); or @read's error.
 */
int pywalk__thread(py_read_fn read, void *ctx, const struct py_layout *l, uint64_t bias,
		   uint32_t tid, struct py_frame *out, size_t max, size_t *nr);

#endif /* BPFSYM_PYWALK_H */
