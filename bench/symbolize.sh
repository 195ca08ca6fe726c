#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# bench/symbolize.sh: how fast `bpfsym symbolize --elf` names addresses,
# against addr2line (binutils, the anchor) and eu-addr2line (elfutils), in
# the same run on the same random addresses inside the functions of a large
# library (libLLVM-14: 35k functions in its .dynsym, no .symtab), and
# whether they give the same names.
#
#   bench/symbolize.sh                  # from the repository root
#   N=20000 RUNS=5 bench/symbolize.sh
#
# For each tool, with demangling off (names as in the file) and on
# (bpfsym's default, addr2line -C, eu-addr2line -C), times are CPU time
# (user+sys, from wait4's rusage: bench/runstat.pl), which other load on a
# shared machine disturbs far less than wall time (also shown):
#   startup       one address (median of STARTUP_RUNS)
#   per address   (CPU(n) - startup) / (n - 1), CPU(n) the median of RUNS
#   throughput    n / CPU(n), and n / wall(n)
#   peak RSS      of the n-address run
# Each group waits (up to QUIET_MAX s) for an idle machine first.
# All read the addresses on stdin and write to a file.  addr2line and
# eu-addr2line are slow here: each runs on as many of the N addresses as
# fit in BUDGET seconds (estimated on a probe of 1000), once, and the table
# says how many.  The addresses are tests/integration/sym_oracle.pl's
# (`gen --inside`: uniform over functions, first byte, last byte or a byte
# in between; fixed SEED).
#
# Answers: bpfsym's names against nm (sym_oracle.pl check: the symbol nm
# says covers each address, any alias accepted), and against each other
# tool's, address by address: a difference is an "alias" when both names
# are symbols at the covering address (both right), else one side is wrong.
#
# Then `bpfsym symbolize --kernel` on N addresses inside the text symbols
# of /proc/kallsyms (needs root to see the addresses), numbers only, with
# the share of answers naming the symbol the address was drawn from.
#
# Environment: N (100000), SEED (1), RUNS (3), STARTUP_RUNS (10), BUDGET
# (CPU seconds per addr2line/eu-addr2line run, 40), QUIET_MAX (20), LIB
# (the library, libLLVM-14), BPFSYM (the binary to measure, default
# ./bpfsym, built if missing).  Needs perl, nm, readelf, addr2line
# (binutils) and eu-addr2line (apt-get install elfutils); x86_64.

set -u

N=${N:-100000}
SEED=${SEED:-1}
RUNS=${RUNS:-3}
STARTUP_RUNS=${STARTUP_RUNS:-10}
BUDGET=${BUDGET:-40}
QUIET_MAX=${QUIET_MAX:-20}
LIB=${LIB:-/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1}
PROBE=1000

me=symbolize.sh
die() { echo "$me: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

case ${BPFSYM:-} in "" | /*) ;; *) BPFSYM=$(pwd)/$BPFSYM ;; esac
cd "$(dirname "$0")/.." || die "cannot cd to the repository root"
if [ -z "${BPFSYM:-}" ]; then
	if [ ! -x ./bpfsym ]; then
		log "./bpfsym missing: make bpfsym"
		make bpfsym >&2 || die "make bpfsym failed"
	fi
	BPFSYM=$(pwd)/bpfsym
fi
[ -x "$BPFSYM" ] || die "$BPFSYM is not an executable"
ORACLE=$(pwd)/tests/integration/sym_oracle.pl
RUNSTAT=$(pwd)/bench/runstat.pl
[ "$(uname -m)" = x86_64 ] || die "runstat.pl knows x86_64's wait4 only"
[ -r "$LIB" ] || die "$LIB not found (apt-get install libllvm14)"
# Commands are built by word splitting below.
case "$BPFSYM$LIB" in *" "*) die "BPFSYM and LIB must not contain spaces" ;; esac
for t in perl nm readelf addr2line eu-addr2line; do
	command -v "$t" >/dev/null 2>&1 ||
		die "$t not found (apt-get install binutils elfutils perl)"
done
[ "$N" -ge $((PROBE * 2)) ] || die "N must be at least $((PROBE * 2))"

T=$(mktemp -d /tmp/bpfsym-symbolize.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

median() { sort -g | awk '{ a[NR] = $1 } END { printf "%.6f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Wait (up to QUIET_MAX s) until the machine has been idle (under 0.1 CPU
# busy) for 0.5 s: CPU times hold up under other load, wall times do not.
cpubusy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
wait_quiet() {
	waited=0
	while :; do
		a=$(cpubusy); sleep 0.5; b=$(cpubusy)
		busy=$(echo "$a $b $(getconf CLK_TCK)" | awk '{ printf "%.2f", ($2 - $1) / $3 / 0.5 }')
		awk -v b="$busy" 'BEGIN { exit !(b < 0.1) }' && return 0
		if [ "$waited" -ge "$QUIET_MAX" ]; then
			log "machine still busy ($busy CPUs) after ${QUIET_MAX}s; measuring anyway"
			NOISY=$((NOISY + 1))
			return 0
		fi
		sleep 1
		waited=$((waited + 1))
	done
}
NOISY=0

# tool_cmd TOOL MODE: the command line (split on spaces).
tool_cmd() {
	case $1.$2 in
	bpfsym.off) echo "$BPFSYM symbolize --no-demangle --elf $LIB" ;;
	bpfsym.on) echo "$BPFSYM symbolize --elf $LIB" ;;
	addr2line.off) echo "addr2line -f -e $LIB" ;;
	addr2line.on) echo "addr2line -f -C -e $LIB" ;;
	eu-addr2line.off) echo "eu-addr2line -f -e $LIB" ;;
	eu-addr2line.on) echo "eu-addr2line -f -C -e $LIB" ;;
	esac
}

# run CMD IN OUT: one run of CMD reading IN, writing OUT; prints
# "WALL_S CPU_S MAXRSS_KIB" (bench/runstat.pl).  Dies when CMD fails.
run() {
	# shellcheck disable=SC2086
	r=$(perl "$RUNSTAT" "$2" "$3" $1) || die "runstat.pl failed on '$1'"
	case $r in
	*" 0") echo "${r% 0}" ;;
	*) cat "$3.err" >&2; die "'$1' failed (wait status ${r##* })" ;;
	esac
}

# names TOOL OUT: the function names of OUT, one per address ("??": none).
names() {
	case $1 in
	bpfsym) perl -ne 'chomp; my @w = split / /; shift @w; pop @w; my $n = join(" ", @w);
		$n =~ s/\+0x[0-9a-f]+$//; print "$n\n"' "$2" ;;
	*) awk 'NR % 2 == 1' "$2" ;;
	esac
}

# ---- the addresses, and nm's view of the library
# The symbolizer reads the build-id debug file instead when there is one.
SYMS=$LIB
id=$(LC_ALL=C readelf -n "$LIB" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
[ -n "$id" ] && [ -r "$dbg" ] && SYMS=$dbg
log "reading the symbols of $SYMS"
LC_ALL=C nm -f sysv --defined-only "$SYMS" > "$T/symtab" 2>/dev/null
LC_ALL=C nm -D -f sysv --defined-only --without-symbol-versions "$SYMS" > "$T/dynsym" 2>/dev/null
LC_ALL=C readelf -SW "$SYMS" > "$T/secs" 2>/dev/null
# MANGLED<TAB>READABLE as nm -C prints them, to check the demangled runs.
for tab in "" -D; do
	# shellcheck disable=SC2086
	LC_ALL=C nm $tab -p --defined-only --without-symbol-versions "$SYMS" 2>/dev/null | cut -d' ' -f3- > "$T/raw"
	# shellcheck disable=SC2086
	LC_ALL=C nm $tab -p -C --defined-only --without-symbol-versions "$SYMS" 2>/dev/null | cut -d' ' -f3- > "$T/dem"
	paste "$T/raw" "$T/dem" | grep '^_Z' >> "$T/demmap"
done
ORACLE_OPTS="--syms $T/symtab --syms $T/dynsym --sections $T/secs"
# shellcheck disable=SC2086
perl "$ORACLE" gen --inside $ORACLE_OPTS --seed "$SEED" --count "$N" > "$T/addrs" 2> "$T/gen.err" ||
	{ cat "$T/gen.err" >&2; die "sym_oracle.pl gen failed"; }
[ "$(wc -l < "$T/addrs")" -eq "$N" ] || die "sym_oracle.pl made too few addresses"
nfuncs=$(sed -n 's/.*: \([0-9]*\) functions.*/\1/p' "$T/gen.err")
head -1 "$T/addrs" > "$T/addrs.1"
head -"$PROBE" "$T/addrs" > "$T/addrs.probe"

# ---- timing: "TOOL MODE N STARTUP_CPU STARTUP_WALL CPU WALL RSS" lines in $T/results
: > "$T/results"
for mode in off on; do
	for tool in bpfsym addr2line eu-addr2line; do
		cmd=$(tool_cmd $tool $mode)
		wait_quiet
		for _ in $(seq "$STARTUP_RUNS"); do
			run "$cmd" "$T/addrs.1" "$T/out.1"
		done > "$T/startup"
		scpu=$(awk '{ print $2 }' "$T/startup" | median)
		swall=$(awk '{ print $1 }' "$T/startup" | median)
		n=$N
		runs=$RUNS
		if [ $tool != bpfsym ]; then
			# Estimate the CPU cost per address, then fit the run in BUDGET.
			probe=$(run "$cmd" "$T/addrs.probe" "$T/out.probe" | awk '{ print $2 }')
			[ -n "$probe" ] || die "'$cmd' failed on $PROBE addresses"
			n=$(awk -v p="$probe" -v s="$scpu" -v b="$BUDGET" -v n="$N" -v k="$PROBE" 'BEGIN {
				per = (p - s) / (k - 1); m = per > 0 ? int(b / per / 1000) * 1000 : n
				if (m > n) m = n; if (m < k) m = k; print m }')
			runs=1
		fi
		head -"$n" "$T/addrs" > "$T/addrs.n"
		log "$tool, demangling $mode: $n addresses x $runs"
		for _ in $(seq "$runs"); do
			run "$cmd" "$T/addrs.n" "$T/out.$tool.$mode"
		done > "$T/runs"
		wall=$(awk '{ print $1 }' "$T/runs" | median)
		cpu=$(awk '{ print $2 }' "$T/runs" | median)
		rss=$(awk '{ print $3 }' "$T/runs" | sort -n | tail -1)
		lines=$(wc -l < "$T/out.$tool.$mode")
		want=$n
		[ $tool = bpfsym ] || want=$((2 * n))
		[ "$lines" -eq "$want" ] || die "$tool wrote $lines lines for $n addresses"
		names $tool "$T/out.$tool.$mode" > "$T/names.$tool.$mode"
		echo "$tool $mode $n $scpu $swall $cpu $wall $rss" >> "$T/results"
	done
done

# ---- answers
: > "$T/agree"
for mode in off on; do
	dem=
	[ $mode = on ] && dem="--demangled $T/demmap"
	# shellcheck disable=SC2086
	perl "$ORACLE" check $ORACLE_OPTS $dem --module "$LIB" --max-show 5 \
		"$T/addrs" "$T/out.bpfsym.$mode" > "$T/check.$mode"
	echo "nm $mode $(tail -1 "$T/check.$mode")" >> "$T/agree"
	grep '^MISMATCH' "$T/check.$mode" | sed 's/^/    /' >&2
	for tool in addr2line eu-addr2line; do
		n=$(wc -l < "$T/names.$tool.$mode")
		head -"$n" "$T/addrs" > "$T/addrs.n"
		head -"$n" "$T/names.bpfsym.$mode" > "$T/names.b"
		# shellcheck disable=SC2086
		perl "$ORACLE" compare $ORACLE_OPTS $dem --labels "bpfsym,$tool" --max-show 3 \
			"$T/addrs.n" "$T/names.b" "$T/names.$tool.$mode" > "$T/cmp.$tool.$mode"
		echo "$tool $mode $(tail -1 "$T/cmp.$tool.$mode")" >> "$T/agree"
		grep '^DIFF' "$T/cmp.$tool.$mode" >> "$T/diffs"
	done
done

# ---- kernel: addresses inside kallsyms' text symbols
kernel=0
if awk '$1 !~ /^0+$/ { f = 1; exit } END { exit !f }' /proc/kallsyms 2>/dev/null; then
	kernel=1
	# "ADDR NAME|NAME..." for N addresses, each inside a T/t/W/w symbol
	# with a successor in the same module (what bounds it).
	perl -e '
		my ($n, $seed) = @ARGV;
		my (%names, @addrs, %mod);
		open(my $k, "<", "/proc/kallsyms") or die "/proc/kallsyms: $!\n";
		while (<$k>) {
			my ($ad, $t, $name, $m) = split;
			next unless $t =~ /^[TtWw]$/;
			$ad = hex($ad);
			next unless $ad;
			push @addrs, $ad unless $names{$ad};
			push @{$names{$ad}}, $name;
			$mod{$ad} //= $m // "";
		}
		@addrs = sort { $a <=> $b } @addrs;
		my @ok = grep { $mod{$addrs[$_]} eq $mod{$addrs[$_ + 1]} } 0 .. $#addrs - 1;
		srand($seed);
		for (1 .. $n) {
			my $i = $ok[int(rand(@ok))];
			my ($s, $e) = ($addrs[$i], $addrs[$i + 1]);
			printf "0x%x %s\n", $s + int(rand($e - $s)), join("|", @{$names{$s}});
		}' "$N" "$SEED" > "$T/kaddrs.names" || die "cannot read /proc/kallsyms"
	cut -d' ' -f1 "$T/kaddrs.names" > "$T/kaddrs"
	head -1 "$T/kaddrs" > "$T/kaddrs.1"
	cmd="$BPFSYM symbolize --kernel"
	wait_quiet
	for _ in $(seq "$STARTUP_RUNS"); do
		run "$cmd" "$T/kaddrs.1" "$T/kout.1"
	done > "$T/kstartup"
	for _ in $(seq "$RUNS"); do
		run "$cmd" "$T/kaddrs" "$T/kout"
	done > "$T/kruns"
	kres="$N $(awk '{ print $2 }' "$T/kstartup" | median) $(awk '{ print $1 }' "$T/kstartup" | median)"
	kres="$kres $(awk '{ print $2 }' "$T/kruns" | median) $(awk '{ print $1 }' "$T/kruns" | median)"
	kres="$kres $(awk '{ print $3 }' "$T/kruns" | sort -n | tail -1)"
	# Named, and named as drawn (any name at the symbol's address).
	kagree=$(paste -d' ' "$T/kaddrs.names" "$T/kout" | awk '{
		n = $4; sub(/\+0x[0-9a-f]+$/, "", n)
		if ($4 != "??") named++
		k = split($2, ok, "|"); for (i = 1; i <= k; i++) if (ok[i] == n) { same++; break }
	} END { printf "%d %d", named, same }')
else
	log "/proc/kallsyms shows no addresses (run as root): no kernel numbers"
fi

# ---- tables
# results/kres fields: TOOL MODE N STARTUP_CPU STARTUP_WALL CPU WALL RSS
row() {
	awk -v nn="$N" '{
		per = ($6 - $4) / ($3 - 1) * 1e6
		printf "%s %s %d %.2f %.2f %.4f %.4f %.3f %.0f %.0f %d\n", $1, $2, $3, $4 * 1000, $5 * 1000, $6, $7, per, $3 / $6, $3 / $7, $8
	}'
}
row < "$T/results" > "$T/rows"
echo "## symbolize: $N random addresses inside the $nfuncs functions of $(basename "$LIB"), seed $SEED"
echo
echo "Times are CPU (user+sys, from wait4) unless marked wall.  startup: one address, median of"
echo "$STARTUP_RUNS runs.  run: the addresses column, median of $RUNS runs for bpfsym, 1 run for the others."
echo "per address = (run CPU - startup CPU) / (addresses - 1).  RSS: peak of the run."
[ "$NOISY" -gt 0 ] && echo "**$NOISY measurement groups started on a busy machine (other load above 0.1 CPU).**"
echo
echo "| tool | demangle | addresses | startup ms | startup ms wall | run s | run s wall | per address µs | addresses per CPU-s | addresses/s wall | peak RSS KiB | addr2line per address / this |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
awk -v nn="$N" '{ per[$1 " " $2] = $8; l[NR] = $0 } END {
	for (i = 1; i <= NR; i++) {
		split(l[i], f, " ")
		a = per["addr2line " f[2]]
		dm = f[2] == "on" ? (f[1] == "bpfsym" ? "on (default)" : "on (-C)") : (f[1] == "bpfsym" ? "off (--no-demangle)" : "off")
		printf "| %s | %s | %d%s | %.2f | %.2f | %.3f | %.3f | %.3f | %d | %d | %d | %s |\n", f[1], dm, f[3],
			(f[3] < nn ? " (subset)" : ""), f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11],
			(f[8] > 0 ? sprintf("%.1f", a / f[8]) : "-")
	}
}' "$T/rows"
echo
awk -v nn="$N" '$1 == "bpfsym" { b[$2] = $0 } $1 == "addr2line" { a[$2] = $0 } END {
	for (m in b) {
		split(b[m], x, " "); split(a[m], y, " ")
		# addr2line on all N addresses: its startup + N - 1 times its cost per address.
		est = y[4] / 1000 + y[8] * (nn - 1) / 1e6
		printf "- demangling %s: per address bpfsym is %.0fx faster than addr2line; startup %.2fx (%.1f vs %.1f ms); %d addresses take bpfsym %.3f s and addr2line %.1f s%s (%.0fx)\n",
			m, y[8] / x[8], y[4] / x[4], x[4], y[4], nn, x[6], est, (y[3] < nn ? " (extrapolated from its subset)" : ""), est / x[6]
	}
}' "$T/rows" | sort
echo
echo "### Answers"
echo
echo "| bpfsym vs | demangle | addresses | same name | different name: aliases (both right) | only bpfsym right | only the other right | neither |"
echo "|---|---|---|---|---|---|---|---|"
awk '$1 != "nm" {
	for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "| %s | %s | %d | %d | %d | %d | %d | %d |\n", $1, $2, v["compared"], v["same"], v["alias"], v["a_right"], v["b_right"], v["neither"]
}' "$T/agree"
echo
awk '$1 == "nm" {
	for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "bpfsym vs nm (sym_oracle.pl, any alias accepted), demangling %s: %d of %d addresses named as nm says, %d wrong; %d of them at symbols with aliases\n",
		$2, v["checked"] - v["wrong"], v["checked"], v["wrong"], v["aliased"]
}' "$T/agree"
if [ -s "$T/diffs" ]; then
	echo
	echo "Examples of differences:"
	echo
	cut -c1-400 "$T/diffs" | sed 's/^/    /'
fi
if [ $kernel = 1 ]; then
	echo
	echo "### Kernel: \`bpfsym symbolize --kernel\`, /proc/kallsyms ($(grep -c . /proc/kallsyms) lines)"
	echo
	echo "| addresses | startup ms | startup ms wall | run s | run s wall | per address µs | addresses per CPU-s | addresses/s wall | peak RSS KiB | named | named as drawn |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	echo "kernel - $kres" | row | awk -v a="$kagree" '{
		split(a, g, " ")
		printf "| %d | %.2f | %.2f | %.3f | %.3f | %.3f | %d | %d | %d | %d | %d |\n", $3, $4, $5, $6, $7, $8, $9, $10, $11, g[1], g[2] }'
fi
echo
echo "Commands (addresses on stdin, one per line):"
echo
for mode in off on; do
	for tool in bpfsym addr2line eu-addr2line; do
		echo "    $(tool_cmd $tool $mode)"
	done
done
[ $kernel = 1 ] && echo "    $BPFSYM symbolize --kernel"
echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(getconf _NPROCESSORS_ONLN) CPUs; $(uname -r);" \
	"$(addr2line --version | head -1); $(eu-addr2line --version | head -1); bpfsym $(git rev-parse --short HEAD 2>/dev/null)"
