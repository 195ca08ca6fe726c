#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run every test and print the closing line "N passed, N failed, N skipped".
# Unit tests (no root) run under ASan/UBSan; integration tests load the
# real BPF programs and need root: without it they report SKIP.
#
# What runs is what is on disk, and each test must report exactly once:
#   - every tests/unit/test_*.c runs as build/san/test_* (a missing binary
#     is a FAIL naming it), and each RUN_TEST(fn) in the source must print
#     one line PASS/FAIL/SKIP SUITE/fn: none ("reported nothing": the
#     program ended before it) or two are FAILs, and so is a PASS or SKIP of
#     a name no RUN_TEST has;
#   - every tests/integration/test_*.sh runs; lib.sh checks its tests the
#     same way against lib_init and closes with "# lib.sh checked: ...", a
#     file without that line was cut short (FAIL);
#   - a program that exits non-zero without a FAIL line, or prints no
#     result line, is a FAIL; fewer programs reporting than exist on disk,
#     or no test at all, is a FAIL.
# A test counts once, as its worst line (FAIL, then SKIP, then PASS); a
# test that measures speed where timings mean nothing (the VM under TCG)
# says NOTRUN, counted apart on a line of its own before the closing line.
# Tests write only inside their temporary directories: a file or directory
# that is new in the checkout after the run (git status --ignored, outside
# build/) is a FAIL.  The exit status is 1 when anything failed.
#
# A part of the suite (tests/kernel/run-tests.sh, inside another kernel):
# BPFSYM_UNIT=0 leaves the unit tests out, BPFSYM_TESTS="test_a test_b"
# runs only those integration tests (a name with no file is a FAIL);
# each integration test is followed by "# time: NAME: N s".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export BPFSYM="${BPFSYM:-$top/build/san/bpfsym}"
export BPFSYM_TOP="$top"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
out=$(mktemp -d /tmp/bpfsym-test.XXXXXX) || exit 1
export BPFSYM_TEST_TMP="$out"
log="$out/all.log"
: > "$log"

# Untracked and ignored entries of the checkout (build/ aside), before the
# tests: what is there afterwards and not now, a test left.
checkout_state() {
	git -C "$top" status --porcelain --ignored 2>/dev/null |
		awk '/^(\?\?|!!) / { p = substr($0, 4); if (p !~ /^build(\/|$)/) print p }' | sort
}
have_git=0
if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	have_git=1
	checkout_state > "$out/checkout.before"
fi

# A result line for the runner's own findings, in the log.
runner_fail() {
	echo "FAIL $1" | tee -a "$log"
}

nran=0		# programs that printed a result line of their own
nres=0		# their result lines
run_one() {	# run_one NAME CMD...: run CMD, tee its lines, check it ended well
	name=$1; shift
	echo "== $name" | tee -a "$log"
	"$@" > "$out/one.log" 2>&1
	rc=$?
	cat "$out/one.log"
	cat "$out/one.log" >> "$log"
	n=$(grep -Ec '^(PASS|FAIL|SKIP|NOTRUN) ' "$out/one.log")
	nres=$((nres + n))
	if [ "$n" -gt 0 ]; then
		nran=$((nran + 1))
	else
		runner_fail "$name: ran no test"
	fi
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out/one.log"; then
		runner_fail "$name: exited with status $rc and reported no failure"
	fi
}

# unit_check SRC: each RUN_TEST(fn) of SRC reported exactly once in
# $out/one.log, as SUITE/fn (SUITE from TEST_SUITE("..."), else "unit").
unit_check() {
	awk -v src="$1" '
	FNR == NR {
		if (match($0, /TEST_SUITE\("[^"]*"\)/))
			suite = substr($0, RSTART + 12, RLENGTH - 14)
		line = $0
		while (match(line, /RUN_TEST\([A-Za-z_][A-Za-z0-9_]*\)/)) {
			fn[++n] = substr(line, RSTART + 9, RLENGTH - 10)
			line = substr(line, RSTART + RLENGTH)
		}
		next
	}
	/^(PASS|FAIL|SKIP) / {
		t = $2
		sub(/:$/, "", t)
		if (!(t in cnt))
			order[++nrep] = t
		cnt[t]++
		how[t] = how[t] (cnt[t] > 1 ? ", " : "") $1
	}
	END {
		if (suite == "")
			suite = "unit"
		for (i = 1; i <= n; i++) {
			t = suite "/" fn[i]
			if (t in want)
				continue	# RUN_TEST twice: "reported twice" below
			want[t] = 1
			if (!(t in cnt))
				print "FAIL " t ": reported nothing (RUN_TEST(" fn[i] ") in " src ")"
			else if (cnt[t] > 1)
				print "FAIL " t ": reported " (cnt[t] == 2 ? "twice" : cnt[t] " times") " (" how[t] ")"
		}
		for (i = 1; i <= nrep; i++) {
			t = order[i]
			if (!(t in want) && how[t] !~ /FAIL/)
				print "FAIL " t ": reported " how[t] ", but " src " has no RUN_TEST of it"
		}
	}' "$1" "$out/one.log" | tee -a "$log"
}

# The programs this run is to run, one per line.
if [ -n "${BPFSYM_TESTS:-}" ]; then
	for n in $BPFSYM_TESTS; do
		n=${n%.sh}
		echo "tests/integration/test_${n#test_}.sh"
	done
else
	[ "${BPFSYM_UNIT:-1}" = 0 ] || ls tests/unit/test_*.c 2>/dev/null
	ls tests/integration/test_*.sh 2>/dev/null
fi > "$out/chosen"
chosen() { grep -qxF "$1" "$out/chosen"; }

ndisk=0
for src in tests/unit/test_*.c; do
	chosen "$src" || continue
	[ -f "$src" ] || continue
	ndisk=$((ndisk + 1))
	name=$(basename "$src" .c)
	if [ ! -x "build/san/$name" ]; then
		echo "== $name" | tee -a "$log"
		runner_fail "$name: no unit test binary build/san/$name for $src (make unit)"
		continue
	fi
	run_one "$name" "build/san/$name"
	unit_check "$src"
done
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] && chosen "$t" || continue
	ndisk=$((ndisk + 1))
	name=$(basename "$t" .sh)
	t0=$(date +%s)
	run_one "$name" sh "$t"
	echo "# time: $name: $(($(date +%s) - t0)) s"
	if ! grep -q '^# lib\.sh checked: ' "$out/one.log"; then
		runner_fail "$name: ended without lib.sh's check of its tests (killed, or its own EXIT trap?)"
	fi
done

# The older kernels' path on this one: the tests in tests/integration/
# fallback-tests again with every optional kernel feature taken away
# (BPFSYM_FORCE_FALLBACK=all: no task work, no VMA iterator, so processes
# are followed from their exec as on Debian 12's 6.1), as NAME@fallback.
# BPFSYM_FALLBACK_PASS=0 skips it, and so does a run of chosen tests.
if [ "${BPFSYM_FALLBACK_PASS:-1}" != 0 ] && [ -z "${BPFSYM_TESTS:-}" ] &&
   [ -f tests/integration/fallback-tests ]; then
	for name in $(grep -v '^#' tests/integration/fallback-tests); do
		t=tests/integration/$name.sh
		if [ ! -f "$t" ]; then
			echo "== $name@fallback" | tee -a "$log"
			runner_fail "$name@fallback: tests/integration/fallback-tests names no $t"
			continue
		fi
		run_one "$name@fallback" env BPFSYM_FORCE_FALLBACK=all sh "$t"
		if ! grep -q '^# lib\.sh checked: ' "$out/one.log"; then
			runner_fail "$name@fallback: ended without lib.sh's check of its tests (killed, or its own EXIT trap?)"
		fi
	done
fi

# The runner's own checks: every program on disk (counted again, apart
# from the loops above) ran and reported, some test ran, the checkout is as
# clean as it was.
echo "== run.sh" | tee -a "$log"
ondisk=0
while read -r t; do
	if [ -f "$t" ]; then
		ondisk=$((ondisk + 1))
	else
		echo "== $(basename "$t" .sh)" | tee -a "$log"
		runner_fail "$(basename "$t" .sh): no $t (BPFSYM_TESTS=${BPFSYM_TESTS:-})"
	fi
done < "$out/chosen"
if [ "$nres" -eq 0 ]; then
	runner_fail "run.sh: ran zero tests ($ondisk test programs on disk)"
elif [ "$nran" -lt "$ondisk" ] || [ "$ndisk" -lt "$ondisk" ]; then
	runner_fail "run.sh: $ondisk test programs on disk, only $nran of them ran and reported"
fi
if [ $have_git -eq 1 ]; then
	checkout_state > "$out/checkout.after"
	comm -13 "$out/checkout.before" "$out/checkout.after" | while IFS= read -r p; do
		runner_fail "run.sh: the tests left '$p' in the checkout (write into the test's temporary directory)"
	done
fi

# Each test once, as its worst line.
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
# Tests that measure speed, where timings mean nothing (lib.sh's timed):
# neither passed nor skipped, counted here and not in the closing line.
notrun=$(awk '
	/^== / { prog = $2; next }
	/^(PASS|FAIL|SKIP) / { t = $2; sub(/:$/, "", t); other[prog SUBSEP t] = 1 }
	/^NOTRUN / { t = $2; sub(/:$/, "", t); nr[prog SUBSEP t] = 1 }
	END { for (k in nr) if (!(k in other)) n++; print n + 0 }' "$log")
if [ "$notrun" -ne 0 ]; then
	echo
	echo "not run here (they measure speed): $notrun"
	grep '^NOTRUN ' "$log" | sed 's/^/# /'
fi
echo
rm -rf "$out"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
