# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# py_compare: bpfsym's Python frames against the interpreter's own view
# (tests/fixtures/py_oracle.py's OUT), for tests/integration/test_python.sh.
#
#   python3 py_compare.py FOLDED ORACLE [mixed]
#
# FOLDED is `bpfsym report --tid TID --folded` of the oracle's main thread:
# Python frames end in "_[p]".  Prints lines "key value" for the test:
#   py_samples N         samples with a Python frame
#   leaf NAME BPF ORACLE the share (%) of samples whose innermost Python
#                        frame is NAME, bpfsym's; the oracle's: NAME's share
#                        of the main thread's CPU time by its own clock
#                        ("cpu" lines; "other" the rest).  An ORACLE of
#                        "stack" lines only (perf's leaves) gives counts.
#   worst_leaf_diff D    the largest |BPF - ORACLE| of those, in points
#   chain OK N           samples in leaf_a/leaf_b whose Python frames end in
#                        <module>;run;main;outer;middle;leaf_X, of N
#   mixed OK N           (mixed) samples in key_fn/default_fn whose Python
#                        frames are the oracle's chain for it AND have a
#                        native frame between the caller and the callback
#   bad STACK            up to 5 stacks that failed the chain checks
import sys

LEAVES = ("leaf_a", "leaf_b", "key_fn", "default_fn")
CHAIN = ["<module>", "run", "main", "outer", "middle"]
# The Python frames around each callback, and the C function's caller.
MIXED = {
    "key_fn": (CHAIN + ["key_fn"], "middle"),
    "default_fn": (CHAIN + ["dumps", "JSONEncoder.encode", "JSONEncoder.iterencode", "default_fn"],
                   "JSONEncoder.iterencode"),
}


def category(name):
    return name if name in LEAVES else "other"


def parse_folded(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            yield stack.split(";"), int(n)


def main():
    folded, oracle = sys.argv[1], sys.argv[2]
    mixed = len(sys.argv) > 3 and sys.argv[3] == "mixed"
    bpf, total = {}, 0
    chain_ok = chain_n = mixed_ok = mixed_n = 0
    bad = []
    for frames, n in parse_folded(folded):
        py = [f[:-4] for f in frames if f.endswith("_[p]")]
        if not py:
            continue
        total += n
        leaf = py[-1]
        bpf[category(leaf)] = bpf.get(category(leaf), 0) + n
        if leaf in ("leaf_a", "leaf_b"):
            chain_n += n
            if py == CHAIN + [leaf]:
                chain_ok += n
            elif len(bad) < 5:
                bad.append(";".join(frames))
        if mixed and leaf in MIXED:
            want, caller = MIXED[leaf]
            mixed_n += n
            i, j = frames.index(caller + "_[p]") if caller + "_[p]" in frames else -1, len(frames) - 1
            native_between = i >= 0 and any(not f.endswith("_[p]") for f in frames[i + 1:j])
            if py == want and native_between:
                mixed_ok += n
            elif len(bad) < 5:
                bad.append(";".join(frames))
    orc, otot, cpu = {}, 0, {}
    for line in open(oracle):
        f = line.split(" ", 2)
        if f[0] == "stack":
            n, names = int(f[1]), f[2].strip().split(";")
            otot += n
            orc[category(names[-1])] = orc.get(category(names[-1]), 0) + n
        elif f[0] == "cpu_ms":
            cpu["all"] = float(f[1])
        elif f[0] == "cpu":
            name, ms = f[1], float(f[2])
            cpu[category(name)] = cpu.get(category(name), 0.0) + ms
    if "all" in cpu:
        # The fixture's own clock: the leaves', and the rest of the thread's time.
        orc = {c: v for c, v in cpu.items() if c != "all"}
        orc["other"] = max(0.0, cpu["all"] - sum(orc.values()))
        otot = cpu["all"]
    print("py_samples", total)
    print("oracle_total", otot)
    worst = 0.0
    for c in LEAVES + ("other",):
        b = 100.0 * bpf.get(c, 0) / total if total else 0.0
        o = 100.0 * orc.get(c, 0) / otot if otot else 0.0
        worst = max(worst, abs(b - o))
        print("leaf %s %.1f %.1f" % (c, b, o))
    print("worst_leaf_diff %.1f" % worst)
    print("chain", chain_ok, chain_n)
    if mixed:
        print("mixed", mixed_ok, mixed_n)
    for s in bad:
        print("bad", s[-300:])


main()
