#!/bin/sh
# Run every test and print the closing line "N passed, N failed".
# Unit tests (no root) run under ASan/UBSan; integration tests load the
# real BPF programs and need root: without it they report SKIP.
# Each test prints PASS/FAIL/SKIP lines; a test program that crashes or
# prints nothing counts as a failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export BPFSYM="${BPFSYM:-$top/build/san/bpfsym}"
export BPFSYM_TOP="$top"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
out=$(mktemp -d /tmp/bpfsym-test.XXXXXX)
export BPFSYM_TEST_TMP="$out"
log="$out/all.log"
: > "$log"

run_one() {	# run_one NAME CMD...: run CMD, tee its lines, check it ended well
	name=$1; shift
	echo "== $name"
	"$@" > "$out/one.log" 2>&1
	rc=$?
	cat "$out/one.log"
	cat "$out/one.log" >> "$log"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out/one.log"; then
		echo "FAIL $name: exited with status $rc and reported no failure" | tee -a "$log"
	fi
	if ! grep -Eq '^(PASS|FAIL|SKIP) ' "$out/one.log"; then
		echo "FAIL $name: ran no test" | tee -a "$log"
	fi
}

for t in build/san/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" sh "$t"
done

pass=$(grep -c '^PASS ' "$log")
fail=$(grep -c '^FAIL ' "$log")
skip=$(grep -c '^SKIP ' "$log")
if [ "$fail" -ne 0 ]; then
	echo
	echo "failures:"
	grep '^FAIL ' "$log"
fi
if [ "$skip" -ne 0 ]; then
	echo
	echo "skipped:"
	grep '^SKIP ' "$log"
fi
echo
rm -rf "$out"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
