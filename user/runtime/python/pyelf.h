/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pyelf: find a CPython 3.11, 3.12 or 3.13 interpreter in an ELF file (a
 * python3.X executable that links it statically, or libpython3.X.so) and
 * say where its state is and how to read it: struct py_layout, what the
 * BPF walker and the code-object reader (pycode.h) need.
 *
 * Nothing is guessed: the version is the value of Py_Version read from
 * the file (never its name), the offsets come from a table per minor
 * version (written from CPython's own headers, pycore_frame.h,
 * pycore_runtime.h, pycore_interp.h, cpython/pystate.h, cpython/code.h)
 * and are checked against the binary: the co_* members of PyCode_Type's
 * tp_members array (PyMemberDef, read with the file's RELATIVE
 * relocations applied) and, in 3.13, the _Py_DebugOffsets at the start of
 * _PyRuntime's initialized data.  Any disagreement is a miss with a reason.
 *
 * The file is read with pread() only (it belongs to a process we do not
 * trust: docs/SECURITY.md); every size it declares is checked before use
 * and capped (symbol tables and relocations: INPUTCAP_SYMBOLS).
 * x86-64, little-endian ELF64 only.  No libbpf, no libelf.
 */
#ifndef BPFSYM_PYELF_H
#define BPFSYM_PYELF_H

#include <stdint.h>

/* A field that does not exist in this version. */
#define PY_OFF_NONE 0xffffu

/*
 * Where an interpreter's state is and how to walk it.  Addresses are the
 * file's virtual addresses (add the load bias for a process's).  Offsets
 * are in bytes; PY_OFF_NONE where the version has no such field.
 * Fixed-width, no pointers: the lead copies it into the BPF ABI.
 */
struct py_layout {
	uint32_t version;		/* Py_Version: 0x030b02f0 is 3.11.2 final */
	uint32_t minor;			/* 11, 12, 13 */
	uint64_t runtime;		/* _PyRuntime */
	uint64_t eval_start;		/* _PyEval_EvalFrameDefault */
	uint64_t eval_size;
	uint64_t code_type;		/* PyCode_Type */
	uint64_t str_type;		/* PyUnicode_Type */
	uint64_t bytes_type;		/* PyBytes_Type */

	/* From _PyRuntime to a thread's state. */
	uint16_t rt_interp_head;	/* _PyRuntimeState.interpreters.head */
	uint16_t interp_next;		/* PyInterpreterState.next */
	uint16_t interp_threads_head;	/* PyInterpreterState.threads.head */
	uint16_t ts_next;		/* PyThreadState.next */
	uint16_t ts_native_tid;		/* PyThreadState.native_thread_id (unsigned long): the kernel's tid */
	uint16_t ts_thread_id;		/* PyThreadState.thread_id: pthread_self(), the thread's fs base */
	/* The current frame: 3.11/3.12 tstate->cframe->current_frame, 3.13 tstate->current_frame. */
	uint16_t ts_cframe;		/* PyThreadState.cframe, or NONE */
	uint16_t cframe_frame;		/* _PyCFrame.current_frame, or NONE */
	uint16_t ts_frame;		/* PyThreadState.current_frame, or NONE */

	/* _PyInterpreterFrame */
	uint16_t fr_code;		/* f_code (3.11/3.12), f_executable (3.13) */
	uint16_t fr_previous;
	uint16_t fr_instr;		/* prev_instr (3.11/3.12), instr_ptr (3.13): a _Py_CODEUNIT * */
	uint16_t fr_is_entry;		/* 3.11: bool is_entry; NONE after */
	uint16_t fr_owner;		/* char owner */
	uint16_t owner_cstack;		/* 3.12+: FRAME_OWNED_BY_CSTACK; NONE in 3.11 */
	uint16_t owner_generator;	/* FRAME_OWNED_BY_GENERATOR: never incomplete */

	/* PyCodeObject */
	uint16_t co_code_adaptive;	/* the bytecode: 2-byte code units */
	uint16_t co_firstlineno;	/* int */
	uint16_t co_filename;		/* PyObject * (str) */
	uint16_t co_name;
	uint16_t co_qualname;
	uint16_t co_linetable;		/* PyObject * (bytes) */
	uint16_t co_firsttraceable;	/* int _co_firsttraceable: a frame before it is incomplete */

	/* Objects */
	uint16_t ob_type;		/* PyObject.ob_type */
	uint16_t bytes_size;		/* PyVarObject.ob_size of a bytes object */
	uint16_t bytes_sval;		/* PyBytesObject.ob_sval */
	uint16_t str_length;		/* PyASCIIObject.length (code points) */
	uint16_t str_state;		/* PyASCIIObject.state: a 32-bit bitfield */
	uint16_t str_ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data follows */
	uint16_t str_compact_size;	/* sizeof(PyCompactUnicodeObject): compact data follows */
	uint16_t str_data;		/* PyUnicodeObject.data (non-compact strings) */
};

/* Why a file holds no interpreter we can walk. */
enum py_miss {
	PY_MISS_NONE = 0,
	PY_MISS_NOT_ELF,	/* not an x86-64 ELF64 little-endian executable or library, or malformed */
	PY_MISS_NOT_PYTHON,	/* no _PyRuntime: not a CPython interpreter */
	PY_MISS_VERSION,	/* CPython outside 3.11-3.13 (or before 3.11: no Py_Version), or free-threaded */
	PY_MISS_SYMBOLS,	/* an interpreter without a symbol we need (eval function, type objects) */
	PY_MISS_CHECK,		/* the binary disagrees with the version's table */
	PY_MISS_CAP,		/* a table over its cap */
	PY_MISS__NR
};

/* @why for people ("version not supported"), or NULL for an unknown one. */
const char *pyelf__miss_str(enum py_miss why);

/*
 * Decide whether the ELF file open on @fd (borrowed: read with pread,
 * never closed) holds a CPython 3.11-3.13 interpreter, and fill *@out.
 * Returns 0 with *@why = PY_MISS_NONE and *@out filled; -ENOENT with
 * *@why set (the file is no interpreter we support, *@out zeroed except
 * version/minor when the version was read); or another -errno for a read
 * that failed (-EIO) or memory (-ENOMEM), *@why then PY_MISS_NONE.
 * @name is used only in debug log lines.
 */
int pyelf__probe(int fd, const char *name, struct py_layout *out, enum py_miss *why);

/*
 * The table's layout for @version (a Py_Version value) in *@out, without a
 * file: 0, or -ENOENT (not 3.11-3.13).  The addresses are left 0.
 */
int pyelf__table(uint32_t version, struct py_layout *out);

/*
 * The load bias of the ELF file open on @fd in a process that maps its
 * bytes from file offset @pgoff at address @start (a /proc/PID/maps line,
 * or a MAP record): process address = file vaddr + *@bias.  The PT_LOAD
 * mapped there is the one whose page-aligned offset is @pgoff.
 * 0, -ENOENT (no such PT_LOAD), -ENOEXEC (not an ELF file pyelf reads), -EIO.
 */
int pyelf__bias(int fd, uint64_t pgoff, uint64_t start, uint64_t *bias);

#endif /* BPFSYM_PYELF_H */
