#!/bin/sh
# The integration tests inside the test VM (tests/kernel/test-kernel.sh
# runs this through vm-run.sh): tests/run.sh without the unit tests (they
# need no kernel, and make test runs them) and without the forced-fallback
# pass (the kernel in the VM is the older path itself), each
# tests/integration/test_*.sh or those TESTS names ("test_unwind unwind"
# both name tests/integration/test_unwind.sh), judged as make test judges
# them, ending with "N passed, N failed, N skipped" and a "# time: NAME:
# N s" line after each file, to choose the CI subset by time.
top=$(cd "$(dirname "$0")/../.." && pwd)
BPFSYM_UNIT=0 BPFSYM_FALLBACK_PASS=0 BPFSYM_TESTS=${TESTS:-} exec sh "$top/tests/run.sh"
