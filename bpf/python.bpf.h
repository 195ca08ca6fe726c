/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython's frames in the user-stack walk (issue 27): where the native walk
 * (unwind.bpf.h) meets a frame of the interpreter's eval function, the
 * Python frames that call of it runs are written first, leaf first, then
 * the eval frame itself and its callers.  The names come later, in user
 * space (user/runtime/python/): a Python frame here is the code object's
 * address and the instruction it is at (include/bpfsym.h, BPFSYM_FK_PYTHON).
 *
 * Per sample: the process's layout (py_procs, from its interpreter file),
 * then the sampled thread's PyThreadState: the one whose thread_id, which
 * is pthread_self(), equals the task's fs base; cached per thread
 * (py_threads), else found on the interpreter's list of threads.  Its
 * current _PyInterpreterFrame heads a list through ->previous; one call of
 * the eval function owns the frames down to an entry frame (3.11:
 * is_entry set on its first frame; 3.12+: a shim frame owned by the C
 * stack sits below them).  Every pointer comes from the process's memory:
 * a read that fails ends the Python frames (counted), and the walk is
 * bounded by the slots a sample has, as the native one is.
 */
#ifndef BPFSYM_PYTHON_BPF_H
#define BPFSYM_PYTHON_BPF_H

/* --no-interp: native frames only. */
const volatile bool want_interp = true;

/*
 * Userspace's count of its writes of py_procs, each counted after it is
 * made: a walk that found no interpreter holds while the count is the same
 * (its witness, offcpu.bpf.h).
 */
__u32 py_epoch = 0;

/* Threads of one interpreter looked at to find the sampled one. */
#define PY_MAX_THREADS	256
/* The bytes of a frame and of a code object read at once: every field used is below. */
#define PY_FRAME_READ	BPFSYM_PY_READ
#define PY_CODE_READ	BPFSYM_PY_READ

/* The Python part of the walk's state (struct unw_walk). */
struct py_walk {
	__u64 frame;		/* the next _PyInterpreterFrame to write; 0: none left */
	__u32 phase;		/* PY_NATIVE, PY_FRAMES, PY_EVAL */
	__u32 on;		/* the process has an interpreter this walk looks at */
	struct bpfsym_py_proc p;
	__u64 buf[16];		/* a power of two: an index masked to it is in bounds */
};

enum py_phase {
	PY_NATIVE = 0,		/* a native frame: is it the eval function's? */
	PY_FRAMES = 1,		/* writing the Python frames of the eval frame at pc */
	PY_EVAL = 2,		/* they are written: now the eval frame itself */
};

/* tid -> its PyThreadState, checked before use (a thread's state can go, its memory reused). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);	/* tid, as the init namespace sees it */
	__type(value, __u64);
} py_threads SEC(".maps");

/* A word of process memory at @addr, 0 when it cannot be read. */
static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/*
 * The search for the thread state whose thread_id is ->fsbase: per CPU,
 * in map memory, not on the stack (the first sample's task work is at
 * 6.1's 512 bytes of stack across its calls).
 */
struct py_thread_search {
	__u64 ts;		/* the one looked at */
	__u64 fsbase;
	__u64 found;
	__u16 next, thread_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_thread_search);
} py_searches SEC(".maps");

static long py_thread_step(__u32 i, void *ctx)
{
	__u32 zero = 0;
	struct py_thread_search *ps = bpf_map_lookup_elem(&py_searches, &zero);

	if (!ps || !ps->ts)
		return 1;
	if (py_read_ptr(ps->ts + ps->thread_id) == ps->fsbase) {
		ps->found = ps->ts;
		return 1;
	}
	ps->ts = py_read_ptr(ps->ts + ps->next);
	return 0;
}

/* The PyThreadState of thread @tid (fs base @fsbase) under layout @p, or 0. */
static __always_inline __u64 py_thread_state(const struct bpfsym_py_proc *p, __u32 tid, __u64 fsbase)
{
	__u64 *cached = bpf_map_lookup_elem(&py_threads, &tid), interp, ts;
	struct py_thread_search *ps;
	__u32 zero = 0;

	if (cached && *cached && py_read_ptr(*cached + p->ts_thread_id) == fsbase)
		return *cached;
	interp = py_read_ptr(p->runtime + p->interp_head);
	ps = bpf_map_lookup_elem(&py_searches, &zero);
	if (!interp || !ps)
		return 0;
	ps->ts = py_read_ptr(interp + p->threads_head);
	ps->fsbase = fsbase;
	ps->found = 0;
	ps->next = p->ts_next;
	ps->thread_id = p->ts_thread_id;
	bpf_loop(PY_MAX_THREADS, py_thread_step, NULL, 0);
	ts = ps->found;
	if (ts)
		bpf_map_update_elem(&py_threads, &tid, &ts, BPF_ANY);
	return ts;
}

/*
 * Set up @py for a walk of the current task, thread group @tgid: its
 * layout and its thread's current frame.  Nothing to do (py->on 0) for a
 * process without an interpreter, or a thread Python does not know.
 */
static __always_inline void py_start(struct py_walk *py, __u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct bpfsym_py_proc *p;
	__u32 tid = task->pid, *parent;
	__u64 ts, cf;

	py->on = 0;
	py->frame = 0;
	py->phase = PY_NATIVE;
	if (!want_interp)
		return;
	p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p) {
		/* A child that has not exec'd runs its parent's image. */
		parent = bpf_map_lookup_elem(&unw_alias, &tgid);
		if (parent)
			p = bpf_map_lookup_elem(&py_procs, parent);
	}
	if (!p)
		return;
	py->p = *p;
	ts = py_thread_state(&py->p, tid, BPF_CORE_READ(task, thread.fsbase));
	if (!ts) {
		stat_inc(BPFSYM_STAT_PY_NO_THREAD);
		return;
	}
	if (py->p.flags & BPFSYM_PY_CFRAME) {
		cf = py_read_ptr(ts + py->p.ts_frame);
		py->frame = cf ? py_read_ptr(cf + py->p.cframe_frame) : 0;
	} else {
		py->frame = py_read_ptr(ts + py->p.ts_frame);
	}
	py->on = 1;
	stat_inc(BPFSYM_STAT_PY_SAMPLES);
}

/* Whether @pc (a return address unless @exact) is in the eval function. */
static __always_inline bool py_in_eval(const struct py_walk *py, __u64 pc, __u32 exact)
{
	__u64 at = exact ? pc : pc - 1;

	return py->on && py->frame && at - py->p.eval_start < py->p.eval_end - py->p.eval_start;
}

/* The 8-byte field at @off of the frame read into @py->buf (0 past it). */
static __always_inline __u64 py_field(const struct py_walk *py, __u16 off)
{
	__u32 i = off / 8;

	if (i >= PY_FRAME_READ / 8)
		return 0;
	return py->buf[i & 15];
}

/* The byte at @off of the frame read into @py->buf. */
static __always_inline __u8 py_byte(const struct py_walk *py, __u16 off)
{
	__u32 i = off / 8;

	if (i >= PY_FRAME_READ / 8)
		return 0;
	return (__u8)(py->buf[i & 15] >> ((off & 7) * 8));
}

/*
 * Write code object @code at instruction @instr to @s's slots at
 * [@idx, @idx + 1]: its address and its first line, checked to be a code
 * object (its type).  0 when it is not one, 1 written, -1 on a fault.
 * The object's head is read into @py->buf: the frame's fields are used.
 */
static __always_inline int py_write_frame(struct py_walk *py, struct bpfsym_sample *s, __u32 idx,
					  __u64 code, __u64 instr)
{
	__u64 bytecode, index = BPFSYM_PY_NO_INDEX, line;
	__u16 l = py->p.co_firstlineno;

	if (bpf_probe_read_user(py->buf, PY_CODE_READ, (void *)code))
		return -1;
	if (py_field(py, py->p.ob_type) != py->p.code_type)
		return 0;
	/* An int: its 4 bytes in the word that holds them. */
	line = py_field(py, l & ~7) >> ((l & 4) * 8) & 0xffffffff;
	bytecode = code + py->p.co_code;
	if (instr >= bytecode && (instr - bytecode) / 2 < BPFSYM_PY_NO_INDEX)
		index = (instr - bytecode) / 2;
	if (idx + 1 >= 2 * BPFSYM_MAX_FRAMES)
		return 0;
	s->ips[idx] = bpfsym_fk_slot0(BPFSYM_FK_PYTHON, code);
	s->ips[idx + 1] = bpfsym_fk_py_slot1(line, index);
	return 1;
}

/*
 * One step of the PY_FRAMES phase: the next frame of the eval call at the
 * walk's pc, written to @s at @idx when it is a Python one.  Returns the
 * slots written (0 or 2), or -1 when the walk ends (a fault).  The phase
 * becomes PY_EVAL at the call's entry frame.
 */
static __always_inline int py_step(struct py_walk *py, struct bpfsym_sample *s, __u32 idx)
{
	__u64 frame = py->frame, code, prev, instr;
	bool last;
	int n;

	if (!frame) {
		py->phase = PY_EVAL;
		return 0;
	}
	if (bpf_probe_read_user(py->buf, PY_FRAME_READ, (void *)frame)) {
		stat_inc(BPFSYM_STAT_PY_READ_FAULT);
		py->frame = 0;
		py->phase = PY_EVAL;
		return 0;
	}
	code = py_field(py, py->p.fr_code);
	prev = py_field(py, py->p.fr_previous);
	if (py->p.flags & BPFSYM_PY_OWNER) {
		/* The shim below a call's frames: not a Python frame, the end of this call's. */
		if (py_byte(py, py->p.fr_entry) == py->p.owner_cstack) {
			py->frame = prev;
			py->phase = PY_EVAL;
			return 0;
		}
		last = false;
	} else {
		last = py_byte(py, py->p.fr_entry) != 0;
	}
	instr = py_field(py, py->p.fr_instr);
	py->frame = prev;
	if (last || !prev)
		py->phase = PY_EVAL;
	n = py_write_frame(py, s, idx, code, instr);
	if (n < 0) {
		stat_inc(BPFSYM_STAT_PY_READ_FAULT);
		return 0;
	}
	return n ? 2 : 0;
}

#endif /* BPFSYM_PYTHON_BPF_H */
