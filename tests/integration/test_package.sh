#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Debian package (issue 26, item 3), built from the tree and installed
# only inside a private mount namespace whose /usr, /etc, /var (and /lib
# when it is not a symlink) are overlays with their upper layers in $T: the
# machine's own root is unchanged afterwards.
#
#   package_build     packaging/build-deb.sh into $T gives one .deb
#   package_lintian   Debian's lintian prints no E: line on it
#   package_contents  dpkg-deb -c: the binary, a man page per docs/*.1, the
#                     unit in /lib/systemd/system with ExecStart=/usr/bin/bpfsym,
#                     the examples under /usr/share/doc/bpfsym/examples, the
#                     copyright; no maintainer script (nothing enables the unit)
#   package_install   in the namespace: `apt-get install ./bpfsym_*.deb`, then
#                     the installed `bpfsym -a -d 1` exits 0 with samples
#                     (a shell loop burns CPU meanwhile),
#                     the unit is not enabled; `apt-get remove` leaves none of
#                     the package's files, `apt-get purge` leaves dpkg no
#                     trace of it and no path naming bpfsym in the overlays
#                     but dpkg's and apt's logs
. "$(dirname "$0")/lib.sh"
lib_init integration/package_build integration/package_lintian \
	integration/package_contents integration/package_install

for t in dpkg-deb dpkg-shlibdeps; do
	command -v $t > /dev/null || skip_all "$t not installed (dpkg-dev)"
done
[ -x "$BPFSYM_TOP/bpfsym" ] || skip_all "no $BPFSYM_TOP/bpfsym (make bpfsym)"

# ---- package_build
mkdir -p "$T/out"
if ! run_to 300 "$BPFSYM_TOP/packaging/build-deb.sh" "$T/out" "$T/work" > "$T/build.out" 2>&1; then
	fail integration/package_build "build-deb.sh failed"
	show "$T/build.out"
	skip_all "no package"
fi
set -- "$T"/out/bpfsym_*.deb
if [ $# -ne 1 ] || [ ! -s "$1" ]; then
	fail integration/package_build "want one bpfsym_*.deb in $T/out, have: $*"
	skip_all "no package"
fi
DEB=$1
pass integration/package_build
note "built $(basename "$DEB"): $(dpkg-deb -f "$DEB" Depends)"

# ---- package_lintian
if ! command -v lintian > /dev/null; then
	skip integration/package_lintian "lintian not installed"
else
	run_to 300 lintian --allow-root -I "$DEB" > "$T/lintian.out" 2>&1
	grep -v '^running with root' "$T/lintian.out" | sed 's/^/# lintian: /'
	if grep -q '^E: ' "$T/lintian.out"; then
		fail integration/package_lintian "$(grep -c '^E: ' "$T/lintian.out") errors"
	else
		pass integration/package_lintian
	fi
fi

# ---- package_contents
dpkg-deb -c "$DEB" | awk '{ print $NF }' | sed 's|^\./|/|' > "$T/contents"
dpkg-deb --ctrl-tarfile "$DEB" | tar -t | sed 's|^\./||' | grep . > "$T/control.files"
want="/usr/bin/bpfsym /lib/systemd/system/bpfsym.service /usr/share/doc/bpfsym/copyright
/usr/share/doc/bpfsym/examples/parca.yaml /usr/share/doc/bpfsym/examples/config.alloy"
for m in "$BPFSYM_TOP"/docs/*.1; do
	want="$want /usr/share/man/man1/$(basename "$m").gz"
done
why=
for f in $want; do
	grep -qx "$f" "$T/contents" || why="$why no $f;"
done
scripts=$(grep -E '^(pre|post)(inst|rm)$' "$T/control.files" | tr '\n' ' ')
[ -z "$scripts" ] || why="$why maintainer scripts: $scripts;"
dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./lib/systemd/system/bpfsym.service > "$T/unit" 2> /dev/null
grep -q '^ExecStart=/usr/bin/bpfsym ' "$T/unit" || why="$why the unit's ExecStart is not /usr/bin/bpfsym;"
note "$(grep -vc '/$' "$T/contents") files; control: $(tr '\n' ' ' < "$T/control.files")"
if [ -n "$why" ]; then
	fail integration/package_contents "$why"
	show "$T/contents"
else
	pass integration/package_contents
fi

# ---- package_install, inside a private mount namespace over overlays
name=integration/package_install
if ! command -v unshare > /dev/null || ! command -v apt-get > /dev/null; then
	skip $name "unshare or apt-get not installed"
	lib_done
fi
if ! grep -qw overlay /proc/filesystems && ! modprobe overlay 2> /dev/null; then
	skip $name "no overlayfs in this kernel"
	lib_done
fi
case "$T" in /usr/*|/etc/*|/var/*|/lib/*)
	# The overlays would hide the test's own directory (TMPDIR under them).
	fail $name "the temp directory $T is under a directory the test overlays: set TMPDIR=/tmp"
	lib_done ;;
esac
if ! unshare -m --propagation private true 2> /dev/null; then
	skip $name "unshare -m is not permitted here"
	lib_done
fi
cat > "$T/inns.sh" <<'INNS'
#!/bin/sh
# Runs in the private mount namespace: overlays, then the package's life.
set -u
T=$1 DEB=$2
for d in usr etc var lib; do
	[ -L /$d ] && continue
	mkdir -p "$T/ov/$d/up" "$T/ov/$d/wk"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$T/ov/$d/up,workdir=$T/ov/$d/wk" /$d ||
		{ echo "STEP overlay /$d failed"; exit 1; }
done
export DEBIAN_FRONTEND=noninteractive
step() { echo "STEP $*"; }
cp "$DEB" "$T/pkg.deb"
# No Recommends (libdebuginfod1): the test needs no network.
apt-get install -y -q --no-install-recommends "$T/pkg.deb" > "$T/apt-install.out" 2>&1 ||
	{ step "apt-get install failed"; exit 1; }
step "installed $(dpkg-query -W -f='${Version} ${Status}' bpfsym)"
command -v bpfsym > /dev/null || { step "no bpfsym in PATH"; exit 1; }
mkdir -p "$T/run"
# -a samples only what runs: on an idle machine a second holds no sample
# (CI saw 0), so something burns CPU for the whole recording.
sh -c 'while :; do :; done' &
burner=$!
(cd "$T/run" && bpfsym -a -d 1 > "$T/run.out" 2> "$T/run.err")
rc=$?
kill $burner 2> /dev/null
wait $burner 2> /dev/null
step "bpfsym -a -d 1: status $rc"
[ $rc -eq 0 ] || exit 1
bpfsym report "$T/run/bpfsym.data" --folded > "$T/run.folded" 2> "$T/report.err" ||
	{ step "bpfsym report failed"; exit 1; }
n=$(awk '{ s += $NF } END { print s + 0 }' "$T/run.folded")
step "samples $n"
[ "$n" -gt 0 ] || exit 1
en=$(find /etc/systemd/system -name bpfsym.service 2> /dev/null | head -1)
[ -z "$en" ] || { step "the unit is enabled: $en"; exit 1; }
dpkg -L bpfsym | while read -r f; do [ -f "$f" ] && echo "$f"; done > "$T/files"
apt-get remove -y -q bpfsym > "$T/apt-remove.out" 2>&1 || { step "apt-get remove failed"; exit 1; }
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done < "$T/files" | tr '\n' ' ')
[ -z "$left" ] || { step "left after remove: $left"; exit 1; }
# A package without conffiles leaves dpkg nothing after remove, and apt
# then no longer knows a package it had from a file: purge only what is left.
st=$(dpkg-query -W -f='${Status}' bpfsym 2> /dev/null)
step "after remove: dpkg status '$st'"
case "$st" in
*config-files*) apt-get purge -y -q bpfsym > "$T/apt-purge.out" 2>&1 || { step "apt-get purge failed"; exit 1; } ;;
*) dpkg --purge bpfsym > "$T/apt-purge.out" 2>&1 || { step "dpkg --purge failed"; exit 1; } ;;
esac
st=$(dpkg-query -W -f='${Status}' bpfsym 2> /dev/null)
case "$st" in ""|"unknown ok not-installed") ;; *) step "dpkg still knows it: $st"; exit 1 ;; esac
# Whatever the overlays gained that names bpfsym, but the logs of dpkg and apt.
trace=$(find "$T/ov" -path "$T/ov/*/wk" -prune -o -name '*bpfsym*' -print |
	grep -v -e '/var/up/log/' -e '/var/up/cache/apt/' | tr '\n' ' ')
[ -z "$trace" ] || { step "traces after purge: $trace"; exit 1; }
step "removed and purged: $(wc -l < "$T/files") files gone"
echo "STEP ok"
INNS
run_to 300 unshare -m --propagation private sh "$T/inns.sh" "$T" "$DEB" > "$T/inns.out" 2>&1
sed -n 's/^STEP /# ns: /p' "$T/inns.out"
if grep -qx 'STEP ok' "$T/inns.out"; then
	pass $name
else
	fail $name "$(grep '^STEP' "$T/inns.out" | tail -1 | sed 's/^STEP //')"
	# Shortest first: CI keeps only part of a long failure.
	for f in inns.out run.err report.err apt-remove.out apt-purge.out apt-install.out; do
		[ -s "$T/$f" ] && show "$T/$f"
	done
fi
# The overlays' upper layers hold root-owned copies; they go with $T.
lib_done
