#!/bin/sh
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
. "$(dirname "$0")/lib.sh"
lib_init integration/debug_names_plain integration/debug_names_debuglink \
	integration/debug_names_minidebug integration/debug_names_stripped

for t in objcopy strip nm xz; do
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

for v in plain link mini bare; do
	case $v in
	plain) name=integration/debug_names_plain ;;
	link) name=integration/debug_names_debuglink ;;
	mini) name=integration/debug_names_minidebug ;;
	bare) name=integration/debug_names_stripped ;;
	esac
	# 1 s of CPU time, however long that takes; cpp_burn writes what it had.
	rm -f "$T/$v.cpu"
	run_to 180 "$BPFSYM" record -q -F 199 -o "$T/$v.data" -- "$d/cpp_$v" 1 "$T/$v.cpu" 2> "$T/$v.err"
	rc=$?
	record_ok "$name" "$T/$v.data" "$T/$v.err" $rc && folded "$name" "$T/$v.data" "$T/$v.folded" || continue
	set -- $(share "$T/$v.folded" "cpp_$v")
	cpu=$(fixture_cpu "$T/$v.cpu" main)
	note "$name: $1 samples, $2 in burn::inner:: (demangled); $cpu ms of CPU time (~$(samples_for "$cpu" 199) samples)"
	if ! cpu_enough "$name" "cpp_$v" "$cpu" 900 || ! samples_ok "$name" "cpp_$v" "$1" "$cpu" 199; then
		continue
	fi
	if [ $v != bare ]; then
		if [ $((100 * $2)) -lt $((80 * $1)) ]; then
			fail "$name" "only $2 of $1 samples have a demangled burn::inner:: frame"
			uleaves "$T/$v.folded" "cpp_$v"
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
