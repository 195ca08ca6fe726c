#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Recordings of stripped C++ binaries name their functions like unstripped
# ones, demangled, from where distributions put the symbols.
#
#   debug_names_plain       unstripped: the C++ names, demangled (the reference)
#   debug_names_debuglink   stripped, symbols in .debug/NAME named by its
#                           .gnu_debuglink (CRC checked)
#   debug_names_minidebug   stripped, symbols in MiniDebugInfo
#                           (.gnu_debugdata, xz), made as Fedora does
#   debug_names_stripped    stripped, no symbols anywhere: nothing named
#                           from the binary, and the report header says why
#
# The oracle for the three named ones is perf, sampling the same process
# in the same run (bpfsym records `perf record -- cpp_X`): the share of
# its samples with a frame inside the burn:: functions, by address (nm
# of the plain binary).  bpfsym's share of stacks with those functions'
# demangled names must be within 10 points of it.
. "$(dirname "$0")/lib.sh"
lib_init integration/debug_names_plain integration/debug_names_debuglink \
	integration/debug_names_minidebug integration/debug_names_stripped

for t in objcopy strip nm xz perf perl; do
	command -v $t > /dev/null 2>&1 || skip_all "no $t"
done
d=$T/bin
mkdir -p "$d/.debug"
need_built tests/fixtures/cpp_burn.cc "$T/build.log" g++ -O2 -g -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -o "$d/cpp_plain" "$FIXTURES/cpp_burn.cc"
(
	set -e
	cd "$d"
	# debuglink: the debug file in .debug/, the binary stripped of everything.
	cp cpp_plain cpp_link
	objcopy --only-keep-debug cpp_link .debug/cpp_link.debug
	strip -s cpp_link
	objcopy --add-gnu-debuglink=.debug/cpp_link.debug cpp_link
	# MiniDebugInfo: the functions .dynsym lacks, in an xz'd ELF section.
	cp cpp_plain cpp_mini
	nm -D --format=posix --defined-only cpp_mini | awk '{ print $1 }' | sort > dynsyms
	# Fedora keeps T/t/D only; weak template instantiations (W) are kept too here.
	nm --format=posix --defined-only cpp_mini | awk '$2 ~ /^[TtWw]$/ { print $1 }' | sort > funcsyms
	comm -13 dynsyms funcsyms > keep
	objcopy --only-keep-debug cpp_mini mini.full
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep mini.full mini
	xz -f mini
	strip -s cpp_mini
	objcopy --add-section .gnu_debugdata=mini.xz cpp_mini
	# Nothing at all.
	cp cpp_plain cpp_bare
	strip -s cpp_bare
) > "$T/strip.log" 2>&1 || { show "$T/strip.log"; fail_all "cannot make the stripped variants: $(tail -1 "$T/strip.log")"; }

# share FOLDED COMM: "TOTAL BURN" samples of COMM, and those with a
# burn::inner:: function anywhere in the stack (the hot loops all are).
share() {
	awk -v comm="$2" '
	{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		if (index(stack, comm ";") != 1)
			next
		t += n
		if (stack ~ /;burn::inner::Acc<(double|unsigned long)>::add\((double|unsigned long)\)/ ||
		    stack ~ /;unsigned long burn::inner::spin<unsigned long, 3>\(unsigned long\)/)
			b += n
	}
	END { print t + 0, b + 0 }' "$1"
}

# The burn:: functions share counts, as address ranges of the plain
# binary (the others are copies of it, stripped): "START END" in hex.
nm -C --defined-only -S "$d/cpp_plain" |
	awk '/ burn::inner::Acc<(double|unsigned long)>::add\(|burn::inner::spin<unsigned long, 3>\(/ { print $1, $2 }' \
	> "$T/burn.ranges"
[ -s "$T/burn.ranges" ] || skip_all "nm finds no burn::inner:: functions in cpp_plain"

# perf_share PERFDATA COMM: "TOTAL HIT": perf's samples of COMM, and of
# those, with a frame in the binary inside one of burn.ranges.
perf_share() {
	perf script -i "$1" -F comm,ip,dso 2> /dev/null | perl -e '
		my ($comm, $bin, $ranges) = @ARGV;
		open(my $f, "<", $ranges) or die;
		my @r = map { my ($s, $n) = split; [hex($s), hex($s) + hex($n)] } <$f>;
		local $/ = "";
		my ($t, $h) = (0, 0);
		while (my $s = <STDIN>) {
			my @l = split /\n/, $s;
			next unless $l[0] =~ /^\s*\Q$comm\E\s*$/;
			$t++;
			for (@l[1 .. $#l]) {
				next unless /^\s*([0-9a-f]+)\s+\((.*)\)/;
				my ($ip, $dso) = (hex($1), $2);
				next unless $dso =~ m{/\Q$bin\E$};
				if (grep { $ip >= $_->[0] && $ip < $_->[1] } @r) { $h++; last }
			}
		}
		print "$t $h\n";' "$2" "$2" "$T/burn.ranges"
}

for v in plain link mini bare; do
	case $v in
	plain) name=integration/debug_names_plain ;;
	link) name=integration/debug_names_debuglink ;;
	mini) name=integration/debug_names_minidebug ;;
	bare) name=integration/debug_names_stripped ;;
	esac
	# 1 s of CPU time, however long that takes; cpp_burn writes what it had.
	# perf samples the same process in the same run: how much of its time
	# the burn:: functions take is the workload's (its iostreams' share
	# varies from machine to machine), not a constant.
	rm -f "$T/$v.cpu"
	run_to 180 "$BPFSYM" record -q -F 199 -o "$T/$v.data" -- \
		perf record -q -g -F 199 -o "$T/$v.perf" -- "$d/cpp_$v" 1 "$T/$v.cpu" 2> "$T/$v.err"
	rc=$?
	record_ok "$name" "$T/$v.data" "$T/$v.err" $rc && folded "$name" "$T/$v.data" "$T/$v.folded" || continue
	set -- $(share "$T/$v.folded" "cpp_$v")
	cpu=$(fixture_cpu "$T/$v.cpu" main)
	note "$name: $1 samples, $2 in burn::inner:: (demangled); $cpu ms of CPU time (~$(samples_for "$cpu" 199) samples)"
	if ! cpu_enough "$name" "cpp_$v" "$cpu" 900 || ! samples_ok "$name" "cpp_$v" "$1" "$cpu" 199; then
		continue
	fi
	if [ $v != bare ]; then
		t=$1 b=$2
		set -- $(perf_share "$T/$v.perf" "cpp_$v")
		note "$name: perf, same process: $2 of $1 samples in those functions (by address)"
		if [ "$1" -lt 100 ]; then
			fail "$name" "perf's oracle has only $1 samples of cpp_$v"
		elif [ $((100 * b * $1)) -lt $(((100 * $2 - 10 * $1) * t)) ]; then
			fail "$name" "only $b of $t samples have a demangled burn::inner:: frame; perf: $2 of $1 by address (more than 10 points apart)"
			uleaves "$T/$v.folded" "cpp_$v"
			# Why stacks ended, and the tables' build times: for the next look.
			run_to 60 "$BPFSYM" report "$T/$v.data" 2>&1 |
				grep -E '^# (call graph|user stacks ended|unwind tables)' | show
		else
			pass "$name"
		fi
		continue
	fi
	# Stripped bare: no name from the binary, and the header gives the reason.
	run_to 60 "$BPFSYM" report "$T/$v.data" > "$T/$v.table" 2>&1
	unnamed=$(grep '^# unnamed frames:' "$T/$v.table")
	note "$name: $unnamed"
	if [ "$2" -ne 0 ] || grep -q 'burn::' "$T/$v.folded"; then
		fail "$name" "a binary without symbols got burn:: names"
	elif ! grep -q "cpp_bare+0x" "$T/$v.folded"; then
		fail "$name" "its frames are not [cpp_bare+0x..]"
		uleaves "$T/$v.folded" cpp_bare
	elif ! echo "$unnamed" | grep -Eq 'no symbols|outside any symbol'; then
		fail "$name" "the report header does not say why frames are unnamed: '$unnamed'"
	else
		pass "$name"
	fi
done

lib_done
