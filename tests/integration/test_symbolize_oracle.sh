#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym symbolize --elf` names what binutils' nm says covers an address.
#
# Random addresses (fixed seed) at the first byte, last byte, inside and
# one past the end of function symbols of two large system libraries:
# libLLVM-14 (its .dynsym is its only table: Debian strips .symtab) and
# libc (whose .symtab comes from libc6-dbg's build-id debug file, which the
# symbolizer reads, so nm reads it too).  sym_oracle.pl works out from
# `nm -f sysv` (name, value, size, binding, ELF type, section) and
# `readelf -SW` the symbol that must be named, with its offset; any alias
# at that address is accepted.  Then:
#   - alias_rule: of the aliases, the one elfsym.h promises (global before
#     weak before local, then the shortest name, then byte order);
#   - file_offset: a PIE whose code is mapped at a vaddr other than its file
#     offset, asked with --file-offset (offsets from readelf -lW);
#   - demangle: a C++ fixture (tests/fixtures/cpp_burn.cc) named as
#     c++filt names nm's symbols (or as nm -C does: c++filt spells out the
#     std::ostream family, addr2line -C and nm -C do not);
#   - demangle_libllvm: libLLVM's addresses again, demangled, named as
#     nm -D -C names them.
# No root needed: nothing is loaded into the kernel.
#
# SYMBOLIZE_SEED and SYMBOLIZE_COUNT (addresses per library) override the
# defaults, to chase a failure.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2034
LIB_ROOTLESS=1
lib_init integration/symbolize_oracle_libllvm integration/symbolize_oracle_libc \
	integration/symbolize_alias_rule integration/symbolize_file_offset \
	integration/symbolize_demangle integration/symbolize_demangle_libllvm

SEED=${SYMBOLIZE_SEED:-20240617}
COUNT=${SYMBOLIZE_COUNT:-5000}
ORACLE=$BPFSYM_TOP/tests/integration/sym_oracle.pl
LIBDIR=/usr/lib/x86_64-linux-gnu
LLVM=$LIBDIR/libLLVM-14.so.1
LIBC=$LIBDIR/libc.so.6

for tool in perl nm readelf; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "'$tool' not installed"
done
# Versions nm appends to .dynsym names are not part of them.
nm -D --without-symbol-versions /dev/null 2>&1 | grep -q 'unrecognized option' &&
	skip_all "nm has no --without-symbol-versions (binutils 2.37 or later needed)"
note "seed $SEED, $COUNT addresses per library"

RULES=0
ALIASED=0
CHECKED=0	# check_out runs that compared something

# debug_file ELF: the build-id debug file of ELF under /usr/lib/debug (what
# the symbolizer looks for), or nothing.
debug_file() {
	id=$(LC_ALL=C readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	[ -n "$id" ] || return 0
	f=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	[ -r "$f" ] && echo "$f"
}

# listings ELF TAG: nm's tables and readelf's sections of ELF into $T/TAG.*
# (a stripped file has no .symtab: nm says so, and its listing is empty).
listings() {
	LC_ALL=C nm -f sysv --defined-only "$1" > "$T/$2.symtab" 2>/dev/null
	LC_ALL=C nm -D -f sysv --defined-only --without-symbol-versions "$1" > "$T/$2.dynsym" 2>/dev/null
	LC_ALL=C readelf -SW "$1" > "$T/$2.secs" 2>/dev/null
	grep -q '|' "$T/$2.symtab" "$T/$2.dynsym"
}

# check_out NAME TAG MODULE [sym_oracle.pl options]: compare $T/TAG.out
# with what the oracle expects for $T/TAG.addrs; PASS or FAIL NAME.
check_out() {
	name=$1 tag=$2 module=$3
	shift 3
	perl "$ORACLE" check --syms "$T/$tag.symtab" --syms "$T/$tag.dynsym" \
		--sections "$T/$tag.secs" --module "$module" "$@" \
		"$T/$tag.addrs" "$T/$tag.out" > "$T/$tag.check" 2>&1
	crc=$?
	summary=$(grep '^checked=' "$T/$tag.check")
	note "$tag: $summary"
	checked=$(echo "$summary" | sed -n 's/.*checked=\([0-9]*\).*/\1/p')
	wrong=$(echo "$summary" | sed -n 's/.* wrong=\([0-9]*\).*/\1/p')
	miss=$(echo "$summary" | sed -n 's/.* miss=\([0-9]*\).*/\1/p')
	rule=$(echo "$summary" | sed -n 's/.* rule=\([0-9]*\).*/\1/p')
	aliased=$(echo "$summary" | sed -n 's/.* aliased=\([0-9]*\).*/\1/p')
	if [ -z "$summary" ]; then
		fail "$name" "sym_oracle.pl check failed"
		show "$T/$tag.check"
		return
	fi
	RULES=$((RULES + rule))
	ALIASED=$((ALIASED + aliased))
	CHECKED=$((CHECKED + 1))
	grep '^RULE ' "$T/$tag.check" >> "$T/rules"
	if [ "$crc" -ne 0 ] || [ "$wrong" -ne 0 ]; then
		fail "$name" "$wrong of $checked addresses named otherwise than nm says (first ones below)"
		grep '^MISMATCH ' "$T/$tag.check" | show
	elif [ "$checked" -eq 0 ] || [ $((miss * 4)) -gt "$checked" ]; then
		# About one in ten addresses is one past an end, often a hole:
		# far more "??" means the sample missed the functions.
		fail "$name" "$miss of $checked addresses expected to have no symbol: the sample is wrong"
	else
		pass "$name"
	fi
}

# oracle NAME ELF TAG: the library test.
oracle() {
	name=$1 elf=$2 tag=$3
	if [ ! -r "$elf" ]; then
		skip "$name" "'$elf' not installed"
		return
	fi
	src=$(debug_file "$elf")
	if [ -n "$src" ]; then
		note "$tag: symbols from the debug file $src"
	else
		src=$elf
		note "$tag: no debug file, symbols from $elf itself"
	fi
	if ! listings "$src" "$tag"; then
		fail "$name" "nm lists no symbols in '$src': no oracle"
		return
	fi
	if ! perl "$ORACLE" gen --syms "$T/$tag.symtab" --syms "$T/$tag.dynsym" \
		--sections "$T/$tag.secs" --seed "$SEED" --count "$COUNT" \
		> "$T/$tag.addrs" 2> "$T/$tag.gen.err"; then
		fail "$name" "sym_oracle.pl gen failed"
		show "$T/$tag.gen.err"
		return
	fi
	note "$tag: $(cat "$T/$tag.gen.err")"
	if [ "$(nlines "$T/$tag.addrs")" -ne "$COUNT" ]; then
		fail "$name" "sym_oracle.pl made $(nlines "$T/$tag.addrs") addresses, not $COUNT"
		return
	fi
	t0=$(now_ms)
	run_to 60 "$BPFSYM" symbolize --no-demangle --elf "$elf" < "$T/$tag.addrs" \
		> "$T/$tag.out" 2> "$T/$tag.err"
	rc=$?
	note "$tag: bpfsym symbolize took $(($(now_ms) - t0)) ms for $COUNT addresses"
	if [ $rc -ne 0 ]; then
		fail "$name" "bpfsym symbolize exited with status $rc"
		show "$T/$tag.err"
		return
	fi
	check_out "$name" "$tag" "$elf"
}

# nm_demangled ELF OUT [-D]: "MANGLED<TAB>READABLE" as nm -C prints them
# (nm -p keeps both listings in symbol table order, so their lines pair
# up; "VALUE TYPE NAME" lines, as names like "operator|" rule out sysv).
nm_demangled() {
	# shellcheck disable=SC2086
	LC_ALL=C nm ${3:-} -p --defined-only --without-symbol-versions "$1" 2>/dev/null | cut -d' ' -f3- > "$2.raw"
	# shellcheck disable=SC2086
	LC_ALL=C nm ${3:-} -p -C --defined-only --without-symbol-versions "$1" 2>/dev/null | cut -d' ' -f3- > "$2.dem"
	paste "$2.raw" "$2.dem" | grep '^_Z' > "$2"
}

oracle integration/symbolize_oracle_libllvm "$LLVM" llvm
oracle integration/symbolize_oracle_libc "$LIBC" libc

# ---- libLLVM, demangled
name=integration/symbolize_demangle_libllvm
if [ ! -r "$LLVM" ]; then
	skip "$name" "'$LLVM' not installed"
elif [ ! -s "$T/llvm.addrs" ]; then
	fail "$name" "no libLLVM addresses to ask for: symbolize_oracle_libllvm failed before drawing them"
else
	for s in symtab dynsym secs addrs; do
		cp "$T/llvm.$s" "$T/llvmdem.$s"
	done
	nm_demangled "$LLVM" "$T/llvm.map" -D
	run_to 60 "$BPFSYM" symbolize --elf "$LLVM" < "$T/llvmdem.addrs" > "$T/llvmdem.out" 2> "$T/llvmdem.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name" "bpfsym symbolize exited with status $rc"
		show "$T/llvmdem.err"
	elif [ "$(nlines "$T/llvm.map")" -lt 1000 ]; then
		fail "$name" "only $(nlines "$T/llvm.map") mangled names in libLLVM's .dynsym"
	else
		check_out "$name" llvmdem "$LLVM" --demangled "$T/llvm.map"
	fi
fi

# ---- the C++ fixture, linked so that its code's vaddr is not its offset.
# fixture_ok: 1 built; 0 g++ failed (FAIL); 2 no g++ (SKIP).
FIX=$T/cpp_burn
build_cmd "$FIX.build.log" g++ -O2 -g -fno-omit-frame-pointer -fPIE -pie -Wl,--section-start=.init=0x7000 \
	-o "$FIX" "$FIXTURES/cpp_burn.cc"
case $? in
0) fixture_ok=1 ;;
2) fixture_ok=2 why=$BUILD_WHY ;;
*)
	fixture_ok=0
	show "$FIX.build.log"
	why="cannot build tests/fixtures/cpp_burn.cc: $BUILD_WHY"
	;;
esac
if [ $fixture_ok = 1 ] && ! listings "$FIX" fix; then
	fixture_ok=0
	why="nm lists no symbols in the fixture g++ built"
fi

# ---- --file-offset
name=integration/symbolize_file_offset
if [ $fixture_ok = 2 ]; then
	skip "$name" "$why"
elif [ $fixture_ok = 0 ]; then
	fail "$name" "$why"
else
	LC_ALL=C readelf -lW "$FIX" > "$T/fix.phdrs" 2>/dev/null
	# The executable PT_LOAD's vaddr - offset: 0x6000 asked for above.
	delta=$(perl -ne '@f = split; if (@f > 7 && $f[0] eq "LOAD" && grep { /E/ } @f[6 .. $#f - 1]) {
		print hex($f[2]) - hex($f[1]), "\n"; exit }' "$T/fix.phdrs")
	if [ -z "$delta" ] || [ "$delta" -eq 0 ]; then
		fail "$name" "the linker put the fixture's code at vaddr == file offset, despite --section-start=.init=0x7000"
		show "$T/fix.phdrs"
	elif ! perl "$ORACLE" gen --syms "$T/fix.symtab" --syms "$T/fix.dynsym" \
		--sections "$T/fix.secs" --phdrs "$T/fix.phdrs" --seed "$SEED" --count 2000 \
		> "$T/fixoff.addrs" 2> "$T/fixoff.gen.err"; then
		fail "$name" "sym_oracle.pl gen failed"
		show "$T/fixoff.gen.err"
	else
		note "fixture: code at vaddr = file offset + $(printf '0x%x' "$delta")"
		for s in symtab dynsym secs; do
			cp "$T/fix.$s" "$T/fixoff.$s"
		done
		run_to 60 "$BPFSYM" symbolize --no-demangle --file-offset --elf "$FIX" \
			< "$T/fixoff.addrs" > "$T/fixoff.out" 2> "$T/fixoff.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			fail "$name" "bpfsym symbolize --file-offset exited with status $rc"
			show "$T/fixoff.err"
		else
			check_out "$name" fixoff "$FIX" --phdrs "$T/fix.phdrs"
		fi
	fi
fi

# ---- demangling
name=integration/symbolize_demangle
if [ $fixture_ok = 2 ]; then
	skip "$name" "$why"
elif [ $fixture_ok = 0 ]; then
	fail "$name" "$why"
elif ! command -v c++filt >/dev/null 2>&1; then
	skip "$name" "c++filt not installed"
else
	# MANGLED<TAB>READABLE maps: c++filt's, and nm -C's.
	nm_demangled "$FIX" "$T/fix.map.nmc"
	sort -u "$T/fix.map.nmc.raw" > "$T/fix.names"
	c++filt < "$T/fix.names" > "$T/fix.cxxfilt"
	paste "$T/fix.names" "$T/fix.cxxfilt" > "$T/fix.map.cxxfilt"
	mangled=$(grep -c '^_Z' "$T/fix.names")
	perl "$ORACLE" gen --syms "$T/fix.symtab" --syms "$T/fix.dynsym" --sections "$T/fix.secs" \
		--seed "$SEED" --count 2000 > "$T/fixdem.addrs" 2> "$T/fixdem.gen.err"
	for s in symtab dynsym secs; do
		cp "$T/fix.$s" "$T/fixdem.$s"
	done
	run_to 60 "$BPFSYM" symbolize --elf "$FIX" < "$T/fixdem.addrs" > "$T/fixdem.out" 2> "$T/fixdem.err"
	rc=$?
	# Names the fixture is there for: each must come out readable (g++ may
	# add a " [clone .isra.0]").
	missing=
	for want in '(anonymous namespace)::hidden(unsigned long)' \
		'main::{lambda(unsigned long)#1}::operator()(unsigned long) const' \
		'burn::inner::mix(unsigned long, int)' \
		'burn::inner::spin<double, 2>(double)' \
		'burn::inner::Acc<unsigned long>::add(unsigned long)' \
		'burn::inner::operator<<(std::ostream&, burn::inner::Point const&)'; do
		grep -qF " $want" "$T/fixdem.out" || missing="$missing; $want"
	done
	if [ $rc -ne 0 ]; then
		fail "$name" "bpfsym symbolize exited with status $rc"
		show "$T/fixdem.err"
	elif [ "$mangled" -lt 10 ]; then
		fail "$name" "only $mangled mangled names in the fixture: g++ did not build what it should"
	elif [ -n "$missing" ]; then
		fail "$name" "names not seen in the output${missing}"
		grep -v '^_Z' "$T/fixdem.out" | show
	else
		check_out "$name" fixdem "$FIX" --demangled "$T/fix.map.cxxfilt" --demangled "$T/fix.map.nmc"
		note "fixdem: $mangled mangled names; demangled_alt counts names where c++filt's spelling differs and nm -C's matched"
	fi
fi

# ---- the alias bpfsym picks, over all of the above
# Thousands of libc's and libLLVM's addresses have aliases: none is a
# failure, unless nothing could be asked (libraries and g++ all missing).
name=integration/symbolize_alias_rule
if [ "$CHECKED" -eq 0 ] && [ ! -r "$LLVM" ] && [ ! -r "$LIBC" ] && [ $fixture_ok = 2 ]; then
	skip "$name" "no library to ask for: '$LLVM', '$LIBC' and g++ missing"
elif [ "$ALIASED" -eq 0 ]; then
	fail "$name" "none of the answers of $CHECKED comparisons fell on a symbol with aliases"
elif [ "$RULES" -ne 0 ]; then
	fail "$name" "$RULES of $ALIASED aliased answers are not the alias elfsym.h promises"
	show "$T/rules"
else
	note "$ALIASED answers from addresses with several names"
	pass "$name"
fi

lib_done
