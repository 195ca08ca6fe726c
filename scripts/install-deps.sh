#!/bin/sh
# Install the Debian 12 packages bpfsym needs to build and test, when any
# is missing.  Used by `make run`, `make test` and .ci/run.
set -eu
pkgs="make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev libzstd-dev
      liblzma-dev zlib1g-dev libiberty-dev xz-utils nodejs elfutils chromium libxml2-utils
      binutils linux-perf procps util-linux time libc6-dbg libclang-rt-14-dev
      libprotobuf-c-dev protobuf-c-compiler golang-go libcap2-bin e2fsprogs runc
      curl python3 python3-yaml strace libfuse3-dev fuse3 libdebuginfod-dev debuginfod"
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
