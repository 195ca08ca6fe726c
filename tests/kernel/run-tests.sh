#!/bin/sh
# The integration tests inside the test VM (tests/kernel/test-kernel.sh
# runs this through vm-run.sh): each tests/integration/test_*.sh, or those
# TESTS names ("test_unwind unwind test_cgroup.sh" all name files there),
# judged the way tests/run.sh judges them, then the closing line
# "N passed, N failed, N skipped".  Unit tests are left out: they need no
# kernel and make test runs them.
#
# Same as run.sh: the variables it exports; "sh test_x.sh"; a file that
# prints no result line, exits non-zero without a FAIL, or lacks lib.sh's
# "# lib.sh checked: " line is a FAIL; each test counts once, as its worst
# line.  Unlike it: no check of files left in the checkout (writes land in
# the VM's overlay and vanish), and a "# test-kernel: NAME: N s" line after
# each file, to choose the CI subset by time.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
export BPFSYM="${BPFSYM:-$top/build/san/bpfsym}"
export BPFSYM_TOP="$top"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
out=$(mktemp -d /tmp/bpfsym-test.XXXXXX) || exit 1
export BPFSYM_TEST_TMP="$out"
log=$out/all.log
: > "$log"

runner_fail() { echo "FAIL $1" | tee -a "$log"; }

# The files to run: all, or the named ones (a name with no file is a FAIL).
files=
if [ -z "${TESTS:-}" ]; then
	files=$(ls tests/integration/test_*.sh 2>/dev/null)
else
	for n in $TESTS; do
		n=${n%.sh}
		n=test_${n#test_}
		if [ -f "tests/integration/$n.sh" ]; then
			files="$files tests/integration/$n.sh"
		else
			echo "== $n" >> "$log"
			runner_fail "$n: no tests/integration/$n.sh (TESTS=$TESTS)"
		fi
	done
fi

for t in $files; do
	name=$(basename "$t" .sh)
	echo "== $name" | tee -a "$log"
	t0=$(date +%s)
	sh "$t" > "$out/one.log" 2>&1
	rc=$?
	cat "$out/one.log"
	cat "$out/one.log" >> "$log"
	if ! grep -Eq '^(PASS|FAIL|SKIP) ' "$out/one.log"; then
		runner_fail "$name: ran no test"
	fi
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out/one.log"; then
		runner_fail "$name: exited with status $rc and reported no failure"
	fi
	if ! grep -q '^# lib\.sh checked: ' "$out/one.log"; then
		runner_fail "$name: ended without lib.sh's check of its tests (killed, or its own EXIT trap?)"
	fi
	echo "# test-kernel: $name: $(($(date +%s) - t0)) s"
done

# Each test once, as its worst line (run.sh's tally).
set -- $(awk '
	/^== / { prog = $2; next }
	/^(PASS|FAIL|SKIP) / {
		t = $2
		sub(/:$/, "", t)
		k = prog SUBSEP t
		r = ($1 == "FAIL") ? 3 : ($1 == "SKIP") ? 2 : 1
		if (r > worst[k])
			worst[k] = r
	}
	END {
		for (k in worst)
			c[worst[k]]++
		print c[1] + 0, c[3] + 0, c[2] + 0
	}' "$log")
pass=$1 fail=$2 skip=$3
if [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$skip" -eq 0 ]; then
	echo "== run-tests.sh" >> "$log"
	runner_fail "run-tests.sh: ran zero tests"
	fail=1
fi
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
