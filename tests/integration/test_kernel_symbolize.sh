#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym symbolize --kernel [--kallsyms FILE] ADDR...` against a kallsyms
# oracle written here in perl, independent of bpfsym's parser.
#
# ~2000 addresses are drawn inside text symbols (a symbol's address plus
# an offset below the next symbol's; below 4 KiB past the last symbol of a
# module, where nothing bounds it), every module and BPF symbol among them.
# Each output line "0xADDR SYMBOL+0xOFFSET MODULE" must name a symbol at
# the greatest text-symbol address <= ADDR (any of the names there: aliases
# share addresses), with that name's module ("[kernel.kallsyms]" for
# vmlinux, "[name]" otherwise) and OFFSET = ADDR - that address.
#
#  - live: /proc/kallsyms while a background recording has its BPF programs
#    loaded (so "[bpf]" symbols exist); only addresses whose symbol is the
#    same in a copy taken before and after are judged;
#  - file: --kallsyms with that copy plus two made-up modules (this VM may
#    load none), with aliases and a module ending close to the next one;
#  - misses: addresses below every symbol, past every one, and in the data
#    after _etext are "?? [unknown]".
. "$(dirname "$0")/lib.sh"
lib_init integration/kernel_symbolize_live integration/kernel_symbolize_file \
	integration/kernel_symbolize_misses

N=2000

if ! "$BPFSYM" symbolize --help > "$T/help.out" 2>&1; then
	show "$T/help.out"
	fail_all "bpfsym symbolize --help failed: $(tail -1 "$T/help.out")"
fi
if [ ! -r /proc/kallsyms ]; then
	skip_all "/proc/kallsyms is not readable"
fi
if ! awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
	skip_all "/proc/kallsyms shows only zero addresses (kptr_restrict)"
fi
if ! command -v perl >/dev/null 2>&1; then
	skip_all "'perl' not installed (the oracle)"
fi

# The oracle.  oracle.pl gen KALLSYMS N ADDRS ORACLE: draw N addresses
# (seeded, so a failure reproduces with the same text), one "0x.." per line
# in ADDRS, and for each an ORACLE line "ADDR SYMADDR NAME[MOD] NAME[MOD]...".
# oracle.pl check ORACLE OUTPUT [ONLY]: judge OUTPUT line by line; with
# ONLY, judge only the addresses listed there.  Prints "checked N" and the
# first mismatches; exits 1 on any.
cat > "$T/oracle.pl" <<'EOF'
use strict;
use warnings;
no warnings 'portable';

sub load {
	my ($path) = @_;
	my (%names, %mods);
	open(my $f, '<', $path) or die "$path: $!";
	while (<$f>) {
		my ($a, $t, $n, $m) = /^([0-9a-fA-F]+)\s+(\S)\s+(\S+)(?:\s+\[(\S+)\])?\s*$/ or next;
		next unless $t =~ /^[tTwW]$/;
		my $addr = hex($a);
		my $mod = defined $m ? "[$m]" : "[kernel.kallsyms]";
		push @{$names{$addr}}, "$n$mod";
		$mods{$addr}{$mod} = 1;
	}
	close $f;
	my @addrs = sort { $a <=> $b } keys %names;
	return (\@addrs, \%names, \%mods);
}

# vmlinux's section end markers name nothing; a run of only them is a bound, not a symbol.
# __indirect_thunk_end is one where 6.1 lists it, at _etext (user/symbolize/kernel/kallsyms.c).
sub only_markers {
	my ($names) = @_;
	for (@$names) {
		return 0 unless /^(_etext|_einittext|__indirect_thunk_end)\[kernel\.kallsyms\]$/;
	}
	return 1;
}

my $mode = shift;
if ($mode eq 'gen') {
	my ($path, $n, $out_addrs, $out_oracle) = @ARGV;
	my ($addrs, $names, $mods) = load($path);
	my (@pick, @special);
	for my $i (0 .. $#$addrs) {
		my $a = $addrs->[$i];
		my @m = keys %{$mods->{$a}};
		next if @m != 1 || only_markers($names->{$a});
		my $bound = 4096;
		if ($i < $#$addrs) {
			my $b = $addrs->[$i + 1];
			my @nm = keys %{$mods->{$b}};
			next if @nm != 1;
			my $gap = $b - $a;
			$bound = ($nm[0] eq $m[0] || $gap < 4096) ? $gap : 4096;
		}
		push @pick, [$a, $bound];
		push @special, $#pick if $m[0] ne '[kernel.kallsyms]';
	}
	die "no text symbols in $path\n" unless @pick;
	srand(20240501);
	# Every module and BPF symbol, or a random quarter of the draw when there are more.
	for (my $i = $#special; $i > 0; $i--) {
		my $j = int(rand($i + 1));
		@special[$i, $j] = @special[$j, $i];
	}
	my @chosen = @special > $n / 4 ? @special[0 .. int($n / 4) - 1] : @special;
	my $nr_special = @chosen;
	push @chosen, int(rand(@pick)) while @chosen < $n;
	open(my $fa, '>', $out_addrs) or die;
	open(my $fo, '>', $out_oracle) or die;
	for my $k (@chosen) {
		my ($a, $bound) = @{$pick[$k]};
		my $addr = $a + int(rand($bound));
		printf $fa "0x%x\n", $addr;
		printf $fo "%x %x %s\n", $addr, $a, join(' ', @{$names->{$a}});
	}
	close $fa;
	close $fo;
	printf "picked %d addresses, %d of them in the %d module and BPF symbols\n",
		scalar(@chosen), $nr_special, scalar(@special);
} elsif ($mode eq 'check') {
	my ($oracle, $output, $only) = @ARGV;
	my %judge;
	if (defined $only) {
		open(my $fj, '<', $only) or die;
		while (<$fj>) { chomp; $judge{$_} = 1; }
	}
	open(my $fo, '<', $oracle) or die;
	open(my $fg, '<', $output) or die;
	my ($checked, $bad, $line) = (0, 0, 0);
	while (my $want = <$fo>) {
		my $got = <$fg>;
		$line++;
		chomp $want;
		my ($addr, $sym, @names) = split ' ', $want;
		if (!defined $got) {
			print "line $line: no output for 0x$addr\n";
			$bad++;
			last;
		}
		chomp $got;
		next if defined $only && !$judge{$want};
		$checked++;
		my ($ga, $gn, $go, $gm) = $got =~ /^0x([0-9a-fA-F]+) (\S+?)(?:\+0x([0-9a-fA-F]+))? (\[\S+\])$/;
		my $ok = defined $ga && hex($ga) == hex($addr) && defined $gn && $gn ne '??' &&
			 (grep { $_ eq "$gn$gm" } @names) && hex($go // '0') == hex($addr) - hex($sym);
		if (!$ok) {
			print "0x$addr: got '$got', want one of @names at 0x$sym (+0x", sprintf("%x", hex($addr) - hex($sym)), ")\n"
				if $bad < 10;
			$bad++;
		}
	}
	if (defined(my $extra = <$fg>)) {
		print "more output lines than addresses: '$extra'";
		$bad++;
	}
	print "checked $checked, wrong $bad\n";
	exit($bad ? 1 : 0);
}
EOF

# ---- live: /proc/kallsyms, with BPF programs loaded
name=integration/kernel_symbolize_live
nr_bpf() {
	grep -c '\[bpf\]$' /proc/kallsyms
}
more_bpf() {
	[ "$(nr_bpf)" -gt "$1" ]
}
bpf0=$(nr_bpf)
bg_start "$BPFSYM" record -a -F 9 -d 60 -o "$T/bg.data" -q
rec=$BG_PID
if ! wait_until 15 more_bpf "$bpf0"; then
	note "the recording added no [bpf] symbols (net.core.bpf_jit_kallsyms off?): BPF programs go untested"
fi
# It loads its programs one by one: wait until their number holds for a second.
n=0 last=-1
while [ $n -lt 30 ] && [ "$(nr_bpf)" != "$last" ]; do
	last=$(nr_bpf)
	sleep 1
	n=$((n + 1))
done
cat /proc/kallsyms > "$T/kallsyms.before"
perl "$T/oracle.pl" gen "$T/kallsyms.before" $N "$T/live.addrs" "$T/live.oracle" > "$T/live.gen" 2>&1
gen_rc=$?
run_to 60 "$BPFSYM" symbolize --kernel < "$T/live.addrs" > "$T/live.out" 2> "$T/live.err"
rc=$?
cat /proc/kallsyms > "$T/kallsyms.after"
stop "$rec"
if [ $gen_rc -ne 0 ]; then
	fail "$name" "the oracle could not draw addresses"
	show "$T/live.gen"
elif [ $rc -ne 0 ]; then
	fail "$name" "bpfsym symbolize --kernel exited with status $rc"
	show "$T/live.err"
else
	# Judge only addresses whose symbol is the same after as before, and
	# still the last one at or below them: other programs (other tests)
	# may load or unload BPF programs meanwhile.
	perl -e '
		no warnings "portable";
		my %after;
		open(my $f, "<", $ARGV[0]) or die;
		while (<$f>) {
			my ($a, $t, $n, $m) = /^([0-9a-f]+)\s+(\S)\s+(\S+)(?:\s+\[(\S+)\])?/ or next;
			$after{hex($a)}{$n . (defined $m ? "[$m]" : "[kernel.kallsyms]")} = 1 if $t =~ /^[tTwW]$/;
		}
		my @sorted = sort { $a <=> $b } keys %after;
		sub floor_addr {
			my ($x) = @_;
			my ($lo, $hi) = (0, scalar @sorted);
			while ($lo < $hi) {
				my $mid = int(($lo + $hi) / 2);
				if ($sorted[$mid] <= $x) { $lo = $mid + 1 } else { $hi = $mid }
			}
			return $lo ? $sorted[$lo - 1] : -1;
		}
		open(my $o, "<", $ARGV[1]) or die;
		while (my $l = <$o>) {
			chomp $l;
			my ($addr, $sym, @names) = split " ", $l;
			next if floor_addr(hex($addr)) != hex($sym);
			print "$l\n" unless grep { !$after{hex($sym)}{$_} } @names;
		}' "$T/kallsyms.after" "$T/live.oracle" > "$T/live.stable"
	stable=$(nlines "$T/live.stable")
	perl "$T/oracle.pl" check "$T/live.oracle" "$T/live.out" "$T/live.stable" > "$T/live.check" 2>&1
	crc=$?
	note "$(cat "$T/live.gen"); $stable unchanged by the end"
	if [ $crc -ne 0 ]; then
		fail "$name" "$(tail -1 "$T/live.check")"
		show "$T/live.check"
	elif [ "$stable" -lt $((N * 9 / 10)) ]; then
		fail "$name" "only $stable of $N addresses kept their symbol during the run"
	else
		pass "$name"
		note "$(tail -1 "$T/live.check")"
	fi
fi

# ---- file: --kallsyms with made-up modules
name=integration/kernel_symbolize_file
# Two modules above everything else, as the kernel lists them (after
# vmlinux, unsorted): aliases, a 't'/'T' mix, gaps from 0x10 to 0x3000,
# and fakemod_a's last symbol 0x800 below fakemod_b's first.  vmlinux's
# lines are kept, the real modules' and BPF's are not: the draw takes at
# most a quarter of N from module symbols, and a kernel with many of them
# (Debian 6.1's ftrace and BPF symbols in a VM) would leave the made-up
# modules a few dozen addresses; the live test covers the real ones.
perl -e '
	no warnings "portable";
	my $top = 0;
	open(my $f, "<", $ARGV[0]) or die;
	while (<$f>) {
		next if /\[/;
		print;
		my ($a) = /^([0-9a-f]+)\s/ or next;
		$top = hex($a) if hex($a) > $top;
	}
	srand(7);
	my $addr = ($top + 0x100000) & ~0xfff;
	for my $mod ("fakemod_a", "fakemod_b") {
		for my $i (0 .. 39) {
			printf "%016x %s %s_fn%d\t[%s]\n", $addr, $i % 3 ? "t" : "T", $mod, $i, $mod;
			printf "%016x t %s_alias%d\t[%s]\n", $addr, $mod, $i, $mod if $i % 10 == 5;
			$addr += $i == 39 ? 0x800 : (0x10, 0x40, 0x200, 0x1000, 0x3000)[int(rand(5))];
		}
	}' "$T/kallsyms.before" > "$T/kallsyms.fake"
perl "$T/oracle.pl" gen "$T/kallsyms.fake" $N "$T/file.addrs" "$T/file.oracle" > "$T/file.gen" 2>&1
gen_rc=$?
run_to 60 "$BPFSYM" symbolize --kernel --kallsyms "$T/kallsyms.fake" < "$T/file.addrs" > "$T/file.out" 2> "$T/file.err"
rc=$?
if [ $gen_rc -ne 0 ]; then
	fail "$name" "the oracle could not draw addresses"
	show "$T/file.gen"
elif [ $rc -ne 0 ]; then
	fail "$name" "bpfsym symbolize --kernel --kallsyms exited with status $rc"
	show "$T/file.err"
elif ! perl "$T/oracle.pl" check "$T/file.oracle" "$T/file.out" > "$T/file.check" 2>&1; then
	fail "$name" "$(tail -1 "$T/file.check")"
	show "$T/file.check"
elif [ "$(grep -c ' \[fakemod_[ab]\]$' "$T/file.out")" -lt 80 ]; then
	fail "$name" "only $(grep -c ' \[fakemod_[ab]\]$' "$T/file.out") addresses named in the made-up modules"
else
	pass "$name"
	note "$(cat "$T/file.gen"); $(tail -1 "$T/file.check")"
fi

# ---- misses: no symbol covers them
name=integration/kernel_symbolize_misses
misses=$(perl -e '
	no warnings "portable";
	my ($lo, $hi, $etext, $after);
	my @t;
	open(my $f, "<", $ARGV[0]) or die;
	while (<$f>) {
		my ($a, $t, $n) = /^([0-9a-f]+)\s+(\S)\s+(\S+)/ or next;
		next unless $t =~ /^[tTwW]$/;
		push @t, hex($a);
		$etext = hex($a) if $n eq "_etext" && !/\[/;
	}
	@t = sort { $a <=> $b } @t;
	my @m;
	push @m, 0x1000 if $t[0] > 0x1000;
	push @m, $t[0] - 0x10 if $t[0] >= 0x10;
	push @m, $t[-1] + 0x100000 if $t[-1] < 0xffffffffffe00000;
	if (defined $etext) {
		my ($next) = grep { $_ > $etext } @t;
		push @m, $etext + 0x800 if defined $next && $next - $etext > 0x1000;
	}
	printf "0x%x ", $_ for @m;' "$T/kallsyms.fake")
# shellcheck disable=SC2086
run_to 60 "$BPFSYM" symbolize --kernel --kallsyms "$T/kallsyms.fake" $misses > "$T/miss.out" 2> "$T/miss.err"
rc=$?
want=$(for a in $misses; do echo "$a ?? [unknown]"; done)
if [ $rc -ne 0 ]; then
	fail "$name" "bpfsym symbolize --kernel exited with status $rc"
	show "$T/miss.err"
elif [ "$(cat "$T/miss.out")" != "$want" ]; then
	fail "$name" "addresses no symbol covers were named"
	show "$T/miss.out"
else
	pass "$name"
	note "$(echo $misses | wc -w) misses: $misses"
fi

lib_done
