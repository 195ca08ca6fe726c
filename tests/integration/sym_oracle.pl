#!/usr/bin/perl
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# sym_oracle.pl: what `bpfsym symbolize --elf` must answer, worked out from
# binutils' view of the same ELF file, so the symbolizer (libelf) is checked
# against an independent reader.  Used by test_symbolize_oracle.sh and
# bench/symbolize.sh.
#
#   sym_oracle.pl gen     OPTIONS > ADDRS   random addresses, one per line
#   sym_oracle.pl check   OPTIONS ADDRS OUT compare bpfsym's output OUT
#   sym_oracle.pl compare OPTIONS ADDRS A B two tools' names, one per line
#                                           each ("??": none), against nm
#
# OPTIONS:
#   --syms FILE      `nm -f sysv --defined-only` output (repeatable: the
#                    .symtab and the .dynsym listings are merged, as elfsym
#                    merges the tables)
#   --sections FILE  `readelf -SW` output of the same file
#   --phdrs FILE     `readelf -lW` output: ADDRS are file offsets
#                    (gen converts, check converts back), for --file-offset
#   --seed N --count N   (gen) the random sequence and its length
#   --inside         (gen) only addresses inside functions, of functions
#                    picked uniformly (no one-past-end, no size-0 bias)
#   --module PATH    (check) the module column bpfsym must print
#   --demangled FILE (check, repeatable) "MANGLED<TAB>READABLE" lines: the
#                    names bpfsym prints are the readable forms
#   --max-show N     (check, compare) mismatches printed (default 10)
#   --labels A,B     (compare) the tools' names, for the report
#
# The rules, from the nm listing only (docs: user/symbolize/elf/elfsym.h, elfsym.c):
# a function is a FUNC or IFUNC symbol defined in an executable section,
# starting inside it; its end is clipped to the section's end.  Symbols at
# one address are aliases: any of their names is right, the group covers
# the largest of their sizes, and a group whose every size is 0 ends where
# the next function starts (or its section ends).  An address covered by
# several groups (nested symbols) belongs to the one that starts last.
# Anything else is "??".
#
# check prints "MISMATCH ..." lines (the first --max-show), "RULE ..." lines
# for names that are aliases but not the one elfsym.h says it picks (global
# before weak before local, then shortest, then byte order; groups with an
# IFUNC are left out: nm's 'i' hides the binding), and one summary line
#   checked=N wrong=N aliased=N rule=N rule_unknown=N miss=N size0=N nested=N demangled_alt=N
# (aliased: answers from a group of several names; miss: "??" expected;
# size0: in a group without a size; demangled_alt: matched a --demangled
# map other than the first)
# It exits 1 when an answer is wrong (rule violations do not count here).
#
# compare classifies every address where A and B name differently: both
# names are aliases of the symbol nm says covers it ("alias"), only A's or
# only B's is right, or neither; it prints the first few of each kind
# ("DIFF kind addr: A | B | nm") and the summary line
#   compared=N same=N alias=N a_right=N b_right=N neither=N
use strict;
use warnings;
no warnings 'portable';	# 64-bit hex()
use Getopt::Long qw(GetOptionsFromArray);

my $mode = shift @ARGV // '';
my (@symfiles, $secfile, $phdrfile, @demfiles, $module);
my ($seed, $count, $max_show, $inside, $labels) = (1, 1000, 10, 0, 'A,B');
GetOptionsFromArray(\@ARGV,
	'syms=s' => \@symfiles, 'sections=s' => \$secfile, 'phdrs=s' => \$phdrfile,
	'seed=i' => \$seed, 'count=i' => \$count, 'module=s' => \$module,
	'demangled=s' => \@demfiles, 'max-show=i' => \$max_show, 'inside' => \$inside,
	'labels=s' => \$labels)
	or die "sym_oracle.pl: bad options\n";
die "sym_oracle.pl: usage: gen|check --syms F --sections F ...\n"
	unless $mode =~ /^(gen|check|compare)$/ && @symfiles && defined $secfile;

# ---- sections: name -> [ [start, end, exec], ... ]
my %secs;
open(my $fh, '<', $secfile) or die "sym_oracle.pl: $secfile: $!\n";
while (<$fh>) {
	# [Nr] Name Type Address Off Size ES Flg Lk Inf Al
	next unless /^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+[0-9a-f]+\s+(\S*)\s+\d+\s+\d+\s+\d+\s*$/;
	my ($name, $addr, $size, $flags) = ($1, hex($2), hex($3), $4);
	push @{$secs{$name}}, [$addr, $addr + $size, $flags =~ /X/ ? 1 : 0];
}
close $fh;

# ---- function symbols
my (%seen, @cands);	# [addr, size, name, rank (undef: unknown), sec_end]
for my $f (@symfiles) {
	open(my $sf, '<', $f) or die "sym_oracle.pl: $f: $!\n";
	while (<$sf>) {
		chomp;
		my @c = split /\|/, $_, -1;
		next unless @c == 7;
		s/^\s+|\s+$//g for @c;
		my ($name, $value, $class, $type, $size, undef, $sec) = @c;
		$type =~ s/\s+//g;	# STT_GNU_IFUNC: "<OS specific>: 10"
		next unless $type eq 'FUNC' || $type eq 'IFUNC' || $type eq '<OSspecific>:10';
		next unless $name ne '' && $value =~ /^[0-9a-f]+$/;
		my $addr = hex($value);
		$size = $size =~ /^[0-9a-f]+$/ ? hex($size) : 0;
		# The executable section of that name holding the start.
		my ($s) = grep { $_->[2] && $addr >= $_->[0] && $addr < $_->[1] } @{$secs{$sec} // []};
		next unless $s;
		$size = $s->[1] - $addr if $size > $s->[1] - $addr;
		next if $seen{"$addr $size $name"}++;
		my $rank = $type ne 'FUNC' ? undef :
			$class eq 'u' ? 0 :
			$class =~ /^[WVwv]$/ ? 1 :
			$class =~ /^[A-Z]$/ ? 0 : 2;
		push @cands, [$addr, $size, $name, $rank, $s->[1]];
	}
	close $sf;
}
@cands = sort { $a->[0] <=> $b->[0] } @cands;

# ---- alias groups: [addr, size, [names], best name or undef, sec_end, size0]
my @groups;
for my $c (@cands) {
	if (@groups && $groups[-1][0] == $c->[0]) {
		my $g = $groups[-1];
		$g->[1] = $c->[1] if $c->[1] > $g->[1];
		push @{$g->[2]}, $c;
	} else {
		push @groups, [$c->[0], $c->[1], [$c], undef, $c->[4], 0];
	}
}
for my $i (0 .. $#groups) {
	my $g = $groups[$i];
	if ($g->[1] == 0) {
		my $end = $i < $#groups && $groups[$i + 1][0] < $g->[4] ? $groups[$i + 1][0] : $g->[4];
		$g->[1] = $end - $g->[0];
		$g->[5] = 1;
	}
	my @al = @{$g->[2]};
	unless (grep { !defined $_->[3] } @al) {
		my ($best) = sort { $a->[3] <=> $b->[3] || length($a->[2]) <=> length($b->[2]) ||
				    $a->[2] cmp $b->[2] } @al;
		$g->[3] = $best->[2];
	}
	my %u;
	$g->[2] = [grep { !$u{$_}++ } map { $_->[2] } @al];
}
# prefmax[i]: the furthest end of groups 0..i, to stop the backward walk.
my @prefmax;
for my $i (0 .. $#groups) {
	my $end = $groups[$i][0] + $groups[$i][1];
	$prefmax[$i] = $i && $prefmax[$i - 1] > $end ? $prefmax[$i - 1] : $end;
}

# The group covering $a that starts last, or undef; and whether another
# group covered $a too (nested).
sub lookup {
	my ($a) = @_;
	my ($lo, $hi) = (0, scalar @groups);
	while ($lo < $hi) {
		my $mid = int(($lo + $hi) / 2);
		if ($groups[$mid][0] <= $a) { $lo = $mid + 1 } else { $hi = $mid }
	}
	for (my $i = $lo - 1; $i >= 0 && $prefmax[$i] > $a; $i--) {
		my $g = $groups[$i];
		next unless $a < $g->[0] + $g->[1];
		my $nested = $i > 0 && $prefmax[$i - 1] > $a ? 1 : 0;
		return ($g, $nested);
	}
	return (undef, 0);
}

# ---- program headers, for file offsets
my @loads;	# [offset, vaddr, filesz]
if (defined $phdrfile) {
	open(my $pf, '<', $phdrfile) or die "sym_oracle.pl: $phdrfile: $!\n";
	while (<$pf>) {
		next unless /^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)/;
		push @loads, [hex($1), hex($2), hex($3)];
	}
	close $pf;
	die "sym_oracle.pl: $phdrfile: no PT_LOAD\n" unless @loads;
}
sub vaddr_to_off {
	my ($v) = @_;
	for my $l (@loads) {
		return $v - $l->[1] + $l->[0] if $v >= $l->[1] && $v < $l->[1] + $l->[2];
	}
	return undef;
}
sub off_to_vaddr {
	my ($o) = @_;
	for my $l (@loads) {
		return $o - $l->[0] + $l->[1] if $o >= $l->[0] && $o < $l->[0] + $l->[2];
	}
	return undef;
}

if ($mode eq 'gen') {
	die "sym_oracle.pl: no function symbols\n" unless @groups;
	srand($seed);
	# One address in ten is one past a function's end (the next function,
	# or a hole); the others are a first byte, a last byte or a byte in
	# between.  Groups whose size was fixed up (every st_size 0) get one
	# pick in ten, when there are any.
	my @size0 = grep { $_->[5] } @groups;
	printf STDERR "sym_oracle.pl: %d functions, %d addresses, %d without a size\n",
		scalar @cands, scalar @groups, scalar @size0;
	my $n = 0;
	for (my $k = 0; $n < $count && $k < 20 * $count; $k++) {
		my $g = !$inside && @size0 && rand() < 0.1 ? $size0[int(rand(@size0))] : $groups[int(rand(@groups))];
		my ($start, $size) = ($g->[0], $g->[1]);
		my $kind = int(rand($inside ? 9 : 10));
		my $a = $kind == 9 ? $start + $size :
			$kind < 3 ? $start :
			$kind < 6 ? $start + $size - 1 :
			$start + int(rand($size));
		$a = vaddr_to_off($a) if @loads;
		next unless defined $a;
		printf "0x%x\n", $a;
		$n++;
	}
	exit 0;
}

# ---- check
my %dem;	# mangled -> { readable forms }, in file order
my @demorder;
for my $i (0 .. $#demfiles) {
	open(my $df, '<', $demfiles[$i]) or die "sym_oracle.pl: $demfiles[$i]: $!\n";
	while (<$df>) {
		chomp;
		my ($m, $r) = split /\t/, $_, 2;
		next unless defined $r;
		$dem{$m}{$r} //= $i;
	}
	close $df;
}
# The forms bpfsym may print for raw name $n: [form, index of the map (0: first)].
sub forms {
	my ($n) = @_;
	return ([$n, 0]) unless @demfiles;
	return ([$n, 0]) unless $dem{$n};
	return map { [$_, $dem{$n}{$_}] } sort keys %{$dem{$n}};
}

if ($mode eq 'compare') {
	my ($addrfile, $afile, $bfile) = @ARGV;
	die "sym_oracle.pl: compare needs ADDRS A B\n" unless defined $bfile;
	my ($la, $lb) = split /,/, $labels, 2;
	open(my $af, '<', $addrfile) or die "sym_oracle.pl: $addrfile: $!\n";
	open(my $fa, '<', $afile) or die "sym_oracle.pl: $afile: $!\n";
	open(my $fb, '<', $bfile) or die "sym_oracle.pl: $bfile: $!\n";
	my %n = map { $_ => 0 } qw(compared same alias a_right b_right neither);
	my %shown;
	while (my $in = <$af>) {
		chomp $in;
		next if $in eq '';
		my ($x, $y) = (scalar <$fa>, scalar <$fb>);
		die "sym_oracle.pl: fewer names than addresses\n" unless defined $x && defined $y;
		chomp($x, $y);
		$n{compared}++;
		if ($x eq $y) {
			$n{same}++;
			next;
		}
		my $a = hex($in);
		$a = off_to_vaddr($a) // -1 if @loads;
		my ($g) = lookup($a);
		my %ok = $g ? map { $_->[0] => 1 } map { forms($_) } @{$g->[2]} : ('??' => 1);
		my $kind = $ok{$x} && $ok{$y} ? 'alias' : $ok{$x} ? 'a_right' : $ok{$y} ? 'b_right' : 'neither';
		$n{$kind}++;
		next if $shown{$kind}++ >= $max_show;
		my @nm = $g ? map { $_->[0] } map { forms($_) } @{$g->[2]} : ('??');
		my $nm = join(' | ', @nm[0 .. ($#nm < 1 ? $#nm : 1)]);
		printf "DIFF %s %s: %s: %s | %s: %s | nm: %s\n", $kind, $in, $la, $x, $lb, $y, $nm;
	}
	print join(' ', map { "$_=$n{$_}" } qw(compared same alias a_right b_right neither)), "\n";
	exit 0;
}

my ($addrfile, $outfile) = @ARGV;
die "sym_oracle.pl: check needs ADDRS and OUT\n" unless defined $outfile;
open(my $af, '<', $addrfile) or die "sym_oracle.pl: $addrfile: $!\n";
open(my $of, '<', $outfile) or die "sym_oracle.pl: $outfile: $!\n";
my ($checked, $wrong, $rule, $rule_unknown, $miss, $size0, $nested, $alt, $aliased) = (0) x 9;
my $shown = 0;
my $rule_shown = 0;
sub bad {
	$wrong++;
	print "MISMATCH $_[0]\n" if $shown++ < $max_show;
}
while (my $in = <$af>) {
	chomp $in;
	next if $in eq '';
	my $line = <$of>;
	$checked++;
	if (!defined $line) {
		bad("$in: no output line");
		next;
	}
	chomp $line;
	my @w = split / /, $line;
	if (@w < 3 || lc($w[0]) ne lc($in)) {
		bad("$in: malformed or out-of-order line '$line'");
		next;
	}
	my $mod = $w[-1];
	my $what = join(' ', @w[1 .. $#w - 1]);
	if (defined $module && $mod ne $module) {
		bad("$in: module '$mod', expected '$module'");
		next;
	}
	my $a = hex($in);
	if (@loads) {
		$a = off_to_vaddr($a);
		if (!defined $a) {
			bad("$in: the test's file offset is outside every PT_LOAD");
			next;
		}
	}
	my ($g, $nest) = lookup($a);
	my ($got_name, $got_off);
	if ($what ne '??') {
		if ($what !~ /^(.*)\+0x([0-9a-f]+)$/) {
			bad("$in: cannot parse '$line'");
			next;
		}
		($got_name, $got_off) = ($1, hex($2));
	}
	if (!$g) {
		$miss++;
		bad("$in: expected ??, got '$what'") if defined $got_name;
		next;
	}
	$size0++ if $g->[5];
	$nested++ if $nest;
	my $want_off = $a - $g->[0];
	my @ok = map { forms($_) } @{$g->[2]};
	my ($hit) = grep { defined $got_name && $_->[0] eq $got_name } @ok;
	if (!$hit || $got_off != $want_off) {
		my @names = map { $_->[0] } @ok;
		my $more = @names > 3 ? sprintf(" (+%d aliases)", @names - 3) : '';
		bad(sprintf("%s (vaddr 0x%x): expected %s+0x%x%s, got '%s'", $in, $a,
			join(' | ', @names[0 .. ($#names < 2 ? $#names : 2)]), $want_off, $more, $what));
		next;
	}
	$alt++ if $hit->[1] > 0;
	$aliased++ if @{$g->[2]} > 1;
	if (!defined $g->[3]) {
		$rule_unknown++;
	} elsif (!grep { $_->[0] eq $got_name } forms($g->[3])) {
		$rule++;
		printf "RULE %s: elfsym.h's choice is %s, got %s\n", $in, $g->[3], $got_name
			if $rule_shown++ < $max_show;
	}
}
if (defined(my $extra = <$of>)) {
	chomp $extra;
	bad("more output lines than addresses, first '$extra'");
}
print "checked=$checked wrong=$wrong aliased=$aliased rule=$rule rule_unknown=$rule_unknown " .
      "miss=$miss size0=$size0 nested=$nested demangled_alt=$alt\n";
exit($wrong ? 1 : 0);
