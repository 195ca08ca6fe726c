#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-perfmap.sh DIR: seed inputs for fuzz_perfmap, written from text
# here (nothing binary is committed): perf maps as JITs write them (V8's
# names, Java's, both hex forms), overlapping entries (code reused),
# malformed lines of every kind, CRLF, a partial last line, over-long lines.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
mkdir -p "$d"

cat > "$d/node" <<'MAP'
3ef4e6a04040 3c Builtin:ArgumentsAdaptorTrampoline
3ef4e6a04100 30 Builtin:CallFunction_ReceiverIsNullOrUndefined
3ef4e6a04200 1e0 LazyCompile:~foo /srv/app/index.js:12
3ef4e6a04400 80 Stub:CEntryStub
3ef4e6a04480 a0 LazyCompile:*foo /srv/app/index.js:12
3ef4e6a04200 100 LazyCompile:*bar /srv/app/lib/util.js:3
MAP

printf '%s\n' \
	'0x7f0000001000 0x40 jit_hot_one' \
	'7f0000002000 40 jit_hot_two' \
	'0X7F0000003000 0X10 Ljava/lang/String;hashCode()I' \
	'7f0000004000	20	tabs between fields' \
	'7f0000005000 0 size_zero' \
	'ffffffffffffff00 ff at_the_top' \
	'00000000000000000000007f0000006000 10 leading_zeros' > "$d/forms"

# Overlaps: one entry split in three, a later one covering all, the same twice.
printf '%s\n' \
	'1000 1000 outer' \
	'1400 400 inner' \
	'1900 100 inner2' \
	'800 2000 all' \
	'1000 10 outer' \
	'5000 10 a' \
	'5000 10 b' > "$d/overlaps"

printf '%s\n' \
	'1000' \
	'1000 10' \
	'1000 10 ' \
	'10g0 10 bad_hex' \
	'0x 10 prefix_only' \
	'1000,10 comma' \
	' 1000 10 leading_space' \
	'10000000000000000 1 seventeen_digits' \
	'1000 10000000000000000 size_overflow' \
	'ffffffffffffff00 101 wraps' \
	'' \
	'2000 10 good' > "$d/malformed"
printf '3000 10 nul\000in_name\n4000 10 after_nul\n' >> "$d/malformed"

printf '1000 10 crlf_one\r\n2000 10 crlf_two\r\n\r\n3000 10 partial_no_newline' > "$d/crlf"

# A line past 4096 bytes, then a good one; and one of exactly 4096.
{
	printf '5000 10 '
	i=0
	while [ $i -lt 130 ]; do printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; i=$((i + 1)); done
	printf '\n6000 10 after_long\n7000 10 '
	i=0
	while [ $i -lt 127 ]; do printf 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'; i=$((i + 1)); done
	printf 'yyyyyyyyyyyyyyyyyyyyyyyy\n'
} > "$d/long"

# Grid programs for the jitsyms ops: start, size, name bytes.
printf '\000\100\000\020\020\001\010\004\102\030\010\303\000\100\004' > "$d/ops"
