#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-pylinetable.sh DIR: seed inputs for fuzz_pylinetable (4 bytes of
# co_firstlineno, little-endian, then a co_linetable): the tables of real
# functions from each CPython 3.11+ installed here (their own bytes), and
# hand-made ones with every entry form and the malformed cases.
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
mkdir -p "$d" || exit 1
i=0
# seed HEX: the bytes HEX (firstlineno first).
seed() {
	i=$((i + 1))
	printf '%s' "$1" | xxd -r -p > "$d/s$i" 2>/dev/null || rm -f "$d/s$i"
}
seed 0a000000e904
seed 0a0000008005d8030109f8f2010003054100
seed 0a000000f807
seed 0a000000e840
seed 0a000000d001
seed fbffff7fe87e7f7f7f7f01
seed 0100000005
for py in /usr/bin/python3.11 /root/.pyenv/versions/3.1[123].*/bin/python3.1[123]; do
	[ -x "$py" ] || continue
	"$py" -I - "$d" "$(basename "$py")" <<'PY' || echo "seeds-pylinetable: $py failed" >&2
import dis, json, os, struct, sys
out, tag = sys.argv[1], sys.argv[2]
codes = [c for c in (dis.dis.__code__, json.dumps.__code__, os.walk.__code__,
                     struct.__spec__.loader.get_code.__code__ if hasattr(struct.__spec__.loader, 'get_code') else None) if c]
for n, c in enumerate(codes):
    with open(os.path.join(out, '%s-%d' % (tag, n)), 'wb') as f:
        f.write(struct.pack('<i', c.co_firstlineno) + c.co_linetable)
PY
done
exit 0
