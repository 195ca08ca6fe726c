#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make test-kernel`: the integration tests inside another kernel (Debian
# 12's 6.1 unless KERNEL names a package) under qemu, by vm-run.sh and
# run-tests.sh.  KERNEL_TESTS picks them: empty, all of them; "ci", the
# list in tests/kernel/ci-tests (a subset that fits CI's time under TCG);
# else test names ("test_unwind test_cgroup").  The exit status is 0 only
# when the VM finished and no test failed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
case ${KERNEL_TESTS:-} in
ci) TESTS=$(sed 's/#.*//' tests/kernel/ci-tests | tr -s ' \n' '  ') ;;
*) TESTS=${KERNEL_TESTS:-} ;;
esac
export TESTS
sh tests/kernel/vm-run.sh sh tests/kernel/run-tests.sh
rc=$?
case $rc in
0) ;;
124|125) echo "test-kernel: FAILED: the VM did not finish (see above)" ;;
*) echo "test-kernel: FAILED: tests failed in the VM" ;;
esac
exit $rc
