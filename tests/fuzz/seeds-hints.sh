#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-hints.sh DIR: --map-anon arguments, good and bad, for fuzz_hints.
set -u
d=$1
i=0
while IFS= read -r line; do
	i=$((i + 1))
	printf '%s' "$line" > "$d/h$i"
done <<'EOF2'
./libtesta.o@257,0x7f864c0000,0x60,0
./libtestb.o@257,0x7f864c0060,0x1000
/opt/app/lib@v2/plugin.so@1234,0x7f0000000000,4096,0x1000
f@1,0,1
f@0,0x1000,0x10
f@12,0x1000,0
f@12,0xffffffffffffffff,2
f@12,0x1000,0x10,0xffffffffffffffff
f@12,0x1000
f@12,0x1000,0x10,0,9
@12,0x1000,0x10
f@12,0x1000,,0x10
f@-1,0x1000,0x10
f@12,0x1000,0x10 
f@4294967296,1,1
f@012,0777,10
EOF2
