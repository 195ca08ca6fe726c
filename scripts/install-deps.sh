#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Install the Debian 12 packages bpfsym needs, when any is missing.
#   install-deps.sh          what building and running need (`make deps`,
#                            `make run`): the compilers and the libraries
#                            scripts/check-deps.sh asks for
#   install-deps.sh --test   that and the tests' toolchain (`make deps-test`,
#                            `make test`, .ci/run): the runtimes and browsers
#                            the fixtures profile, perf as the oracle, runc,
#                            the packaging tools for tests/integration/test_package.sh;
#                            libdebuginfod-dev (build) and debuginfod (test) as
#                            main has them; bpftrace, the off-CPU oracle (test_offcpu)
set -eu
build="make gcc clang pkg-config libbpf-dev bpftool libelf-dev libzstd-dev
      liblzma-dev zlib1g-dev libiberty-dev libprotobuf-c-dev protobuf-c-compiler
      libdebuginfod-dev"
test="llvm xz-utils nodejs elfutils chromium libxml2-utils binutils linux-perf
      procps util-linux time libc6-dbg libclang-rt-14-dev golang-go libcap2-bin
      e2fsprogs runc curl python3 python3-yaml strace libfuse3-dev fuse3
      systemd dpkg-dev lintian debuginfod bpftrace"
case "${1:-}" in
"") pkgs=$build ;;
--test) pkgs="$build $test" ;;
*) echo "usage: install-deps.sh [--test]" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
