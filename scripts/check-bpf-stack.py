#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Find the call chains whose stack Linux 6.1's verifier refuses.

usage: check-bpf-stack.py OBJ.bpf.o...   (exit 1 naming each such chain)

6.1's check_max_stack_depth adds up, along every chain of calls from a
program (bpf-to-bpf calls, and the callbacks a program passes to helpers
such as bpf_loop), each function's stack rounded up to 32 bytes, and
refuses the program whole past 512 ("combined stack size of 6 calls is
544. Too large"), or past 8 frames.  Newer kernels count differently and
load what 6.1 does not, so a build on a new kernel replays the sum here.
A callback passed to an async helper (a task work's) is checked as a
chain of its own, as the verifier of the kernels that have those
helpers does.
A function's stack is the deepest r10-relative slot it touches (a
store, a load, or an address taken as r10 minus a constant), which the
verifier's own count of the paths it walks can only be below: this may
refuse a chain 6.1 would take, never the other way round.
"""
import re
import subprocess
import sys

SECTION = re.compile(r'^Disassembly of section (.+):$')
FUNC = re.compile(r'^[0-9a-f]+ <([^>]+)>:$')
INSN = re.compile(r'^\s*(\d+):\s+(.*)$')
RELOC = re.compile(r'^\s*[0-9a-f]+:\s+(R_BPF_\w+)\s+(\S+)$')
SLOT = re.compile(r'\(r10 - (\d+)\)')
FROM_R10 = re.compile(r'^r(\d+) = r10$')
ADD = re.compile(r'^r(\d+) \+= -(\d+)$')
IMM64 = re.compile(r'= (-?\d+) ll$')
CALL = re.compile(r'^call (-?\d+)$')

MAX_STACK = 512
MAX_FRAMES = 8


def parse(obj):
    """Functions {(section, name): {'start', 'insns': [(idx, text, reloc)]}}."""
    out = subprocess.run(['llvm-objdump', '-d', '-r', '--no-show-raw-insn', obj],
                         check=True, capture_output=True, text=True).stdout
    funcs, sec, cur = {}, None, None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            sec, cur = m.group(1), None
            continue
        m = FUNC.match(line)
        if m:
            if not m.group(1).startswith('LBB'):
                cur = funcs.setdefault((sec, m.group(1)), {'start': None, 'insns': []})
            continue
        # A relocation's offset may be all digits: looked for first.
        m = RELOC.match(line)
        if m and cur is not None and cur['insns']:
            cur['insns'][-1][2] = (m.group(1), m.group(2))
            continue
        m = INSN.match(line)
        if m and cur is not None:
            idx = int(m.group(1))
            if cur['start'] is None:
                cur['start'] = idx
            cur['insns'].append([idx, m.group(2).strip(), None])
    return funcs


def frame(insns):
    """The function's stack as 6.1 counts it in a chain: rounded up to 32, at least 32."""
    deepest, from_r10 = 0, set()
    for _, text, _ in insns:
        for m in SLOT.finditer(text):
            deepest = max(deepest, int(m.group(1)))
        m = ADD.match(text)
        if m and int(m.group(1)) in from_r10:
            deepest = max(deepest, int(m.group(2)))
        m = FROM_R10.match(text)
        reg = re.match(r'^[rw](\d+) ', text)
        if m:
            from_r10.add(int(m.group(1)))
        elif reg and not ADD.match(text):
            from_r10.discard(int(reg.group(1)))
    return (max(deepest, 1) + 31) // 32 * 32


# Helpers and kfuncs whose callback runs later, on a stack of its own: the
# verifier checks it as a program of its own (an async callback), not
# within its caller's chain.  Only kernels that have them load such code.
ASYNC = re.compile(r'^bpf_task_work_schedule_')


def callees(funcs, key, want_async=False):
    """The functions @key calls or passes as a callback (.text ones by
    offset), but those it passes to an async helper (see ASYNC); with
    @want_async, those only.  A callback goes with the first call after
    its address is loaded: a load the compiler moved further up is taken
    as a synchronous callback's, which can only make a chain longer."""
    text_at = {f['start']: name for (sec, name), f in funcs.items() if sec == '.text'}
    sync, asyn, loaded = [], [], []
    for idx, text, reloc in funcs[key]['insns']:
        kind, sym = reloc or (None, None)
        call, imm = CALL.match(text), IMM64.search(text)
        if kind == 'R_BPF_64_64' and sym == '.text' and imm:
            tgt = text_at.get(int(imm.group(1)) // 8)
            if tgt:
                loaded.append(('.text', tgt))
            continue
        if not call:
            continue
        (asyn if kind == 'R_BPF_64_32' and ASYNC.match(sym) else sync).extend(loaded)
        loaded = []
        if kind == 'R_BPF_64_32':
            if sym == '.text':
                tgt = text_at.get(int(call.group(1)) + 1)
            else:
                tgt = sym if ('.text', sym) in funcs else None
            if tgt:
                sync.append(('.text', tgt))
    return asyn if want_async else sync + loaded


def worst(funcs, key, sizes, seen=()):
    """(bytes, chain) of the deepest chain from @key."""
    if key in seen:
        return 0, [key[1] + ' (recursion)']
    best = (0, [])
    for c in set(callees(funcs, key)):
        got = worst(funcs, c, sizes, seen + (key,))
        if got[0] > best[0]:
            best = got
    return sizes[key] + best[0], [key[1]] + best[1]


def main(objs):
    bad = 0
    for obj in objs:
        funcs = parse(obj)
        sizes = {k: frame(f['insns']) for k, f in funcs.items()}
        roots = {k for k in funcs if k[0] != '.text'}
        roots |= {c for k in funcs for c in callees(funcs, k, want_async=True)}
        for key in sorted(roots):
            total, chain = worst(funcs, key, sizes)
            if total > MAX_STACK or len(chain) > MAX_FRAMES:
                bad += 1
                print(f'{obj}: {key[1]}: combined stack of {len(chain)} calls is {total} bytes '
                      f'(6.1 allows {MAX_STACK}, {MAX_FRAMES} frames): ' +
                      ' -> '.join(f'{n} ({sizes.get(("." + "text", n), sizes.get(key))})'
                                  for n in chain), file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
