#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The integration tests inside the test VM (tests/kernel/test-kernel.sh
# runs this through vm-run.sh): tests/run.sh without the unit tests (they
# need no kernel, and make test runs them) and without the forced-fallback
# pass (the kernel in the VM is the older path itself), each
# tests/integration/test_*.sh or those TESTS names ("test_unwind unwind"
# both name tests/integration/test_unwind.sh), judged as make test judges
# them, ending with "N passed, N failed, N skipped" and a "# time: NAME:
# N s" line after each file, to choose the CI subset by time.  By default
# the tests that need no kernel (LIB_ROOTLESS=1: the docs, the layout, the
# fuzz replay, which writes under build/, read-only in the VM) are left to
# make test.
top=$(cd "$(dirname "$0")/../.." && pwd)
tests=${TESTS:-}
if [ -z "$tests" ]; then
	for t in "$top"/tests/integration/test_*.sh; do
		grep -q '^LIB_ROOTLESS=1' "$t" || tests="$tests $(basename "$t" .sh)"
	done
fi
BPFSYM_UNIT=0 BPFSYM_FALLBACK_PASS=0 BPFSYM_TESTS=$tests exec sh "$top/tests/run.sh"
