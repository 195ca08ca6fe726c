#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Find the loops Linux 6.1's verifier refuses before it verifies anything.

usage: check-bpf-cfg.py OBJ.bpf.o...   (exit 1 naming each such loop)

6.1's check_cfg walks every function depth first and allows a cycle to
close only on a jump: a loop whose last edge back to where the walk
entered it is a plain fall-through (an ALU op, a load, a store) or a
call's return ("back-edge from insn 1039 to 1040", the program refused
whole).  Later kernels allow any back-edge, so 6.18 loads what 6.1 does
not, and clang decides the layout (it rotates loops and jumps into their
middle).  This replays that walk on `llvm-objdump -d` of each function, the
successors in the kernel's order (fall-through first, then the branch),
so a build on a new kernel finds what an old one would refuse.  Calls are
not followed: without recursion no cycle crosses a function.
"""
import re
import subprocess
import sys

FUNC = re.compile(r'^[0-9a-f]+ <([^>]+)>:$')
INSN = re.compile(r'^\s*(\d+):\s+(.*)$')
JUMP = re.compile(r'goto ([+-]\d+)')


def functions(obj):
    """{name: {index: text}} of every function of @obj (LBB labels folded in)."""
    out = subprocess.run(['llvm-objdump', '-d', '--no-show-raw-insn', obj],
                         check=True, capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            if not m.group(1).startswith('LBB'):
                cur = funcs.setdefault(m.group(1), {})
            continue
        m = INSN.match(line)
        if m and cur is not None:
            cur[int(m.group(1))] = m.group(2).strip()
    return funcs


def successors(i, text, wide):
    """[(target, loop_ok)] of insn @i as 6.1's visit_insn pushes them."""
    nxt = i + (2 if wide else 1)
    if text == 'exit':
        return []
    m = JUMP.search(text)
    if m:
        tgt = i + int(m.group(1)) + 1
        if text.startswith('goto'):
            return [(tgt, True)]
        return [(nxt, True), (tgt, True)]
    if text.startswith('call'):
        return [(nxt, False)]
    return [(nxt, False)]


def bad_back_edges(insns):
    """The (from, to) edges closing a cycle that 6.1 refuses, in @insns."""
    order = sorted(insns)
    if not order:
        return []
    wide = {i: insns[i].endswith(' ll') for i in order}
    state, edge_done, bad = {}, set(), []
    start = order[0]
    stack = [start]
    state[start] = 'discovered'
    while stack:
        t = stack[-1]
        for k, (w, loop_ok) in enumerate(successors(t, insns[t], wide[t])):
            if (t, k) in edge_done:
                continue
            edge_done.add((t, k))
            if w not in insns:
                continue	# past the function: another function's code
            s = state.get(w)
            if s is None:
                state[w] = 'discovered'
                stack.append(w)
                break
            if s == 'discovered' and not loop_ok:
                bad.append((t, w))
        else:
            state[t] = 'explored'
            stack.pop()
    return bad


def main(objs):
    found = 0
    for obj in objs:
        for name, insns in functions(obj).items():
            for t, w in bad_back_edges(insns):
                found += 1
                print(f'{obj}: {name}: a loop closes on the fall-through from insn {t} '
                      f'({insns[t]}) to {w}: Linux 6.1 refuses it ("back-edge from insn"); '
                      'make it a bpf_loop() callback', file=sys.stderr)
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
