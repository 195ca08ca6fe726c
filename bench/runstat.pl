#!/usr/bin/perl
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# runstat.pl IN OUT CMD ARGS...: run CMD with stdin from IN and stdout to
# OUT (stderr to OUT.err) and print "WALL_S CPU_S MAXRSS_KIB STATUS":
# wall time from fork to reaping, user+sys CPU time and peak RSS of CMD
# alone, from wait4()'s rusage (microseconds, where /usr/bin/time prints
# hundredths of a second: too coarse for a 20 ms start-up).  x86_64 Linux
# only (the wait4 syscall number and struct rusage layout are its).
use strict;
use warnings;
use Time::HiRes qw(time);

my ($in, $out, @cmd) = @ARGV;
die "usage: runstat.pl IN OUT CMD...\n" unless @cmd;
my $SYS_wait4 = 61;

my $t0 = time;
my $pid = fork() // die "runstat.pl: fork: $!\n";
if (!$pid) {
	open(STDIN, '<', $in) or die "runstat.pl: $in: $!\n";
	open(STDOUT, '>', $out) or die "runstat.pl: $out: $!\n";
	open(STDERR, '>', "$out.err") or die "runstat.pl: $out.err: $!\n";
	exec { $cmd[0] } @cmd or die "runstat.pl: $cmd[0]: $!\n";
}
my $status = pack('i', 0);
my $ru = "\0" x 144;	# struct rusage: 2 timevals + 14 longs
my $r = syscall($SYS_wait4, $pid, $status, 0, $ru);
my $t1 = time;
die "runstat.pl: wait4: $!\n" if $r != $pid;
my @f = unpack('q18', $ru);
printf "%.6f %.6f %d %d\n", $t1 - $t0, $f[0] + $f[1] / 1e6 + $f[2] + $f[3] / 1e6, $f[4],
	unpack('i', $status);
