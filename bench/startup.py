#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bench/startup.py: how soon a whole-system recording starts, and what
starting costs, bpfsym against perf record -a -g in the same run (issue 24,
item 7).

    sudo bench/startup.py                  # from the repository root
    REPS=7 BPFSYMS="./bpfsym /tmp/old/bpfsym" sudo -E bench/startup.py
    BPFSYM_FORCE_FALLBACK=all sudo -E bench/startup.py   # the 6.1 path

For each repetition (REPS, default 5), with one busy process per online
CPU running at SCHED_IDLE (so a tick finds work at once, and start-up
never waits for it), each profiler is launched
for 1 s of the whole system (`-a -F 99`) and:
  - time to first sample: from just before the launch (CLOCK_MONOTONIC)
    to the first sample in its recording (bpfsym's `report --perf-script`
    and perf's `script` both print CLOCK_MONOTONIC times: bpfsym stamps
    samples with bpf_ktime_get_ns, perf records with `-k mono`);
  - start-up CPU: user+sys of the profiler over a run of 0.1 s (wait4's
    rusage, children included: the kernel's verification of BPF programs
    is the loading process's system time), most of it start-up.
Medians over the repetitions; the machine should be otherwise idle.
Profilers: BPFSYMS (space-separated binaries, default ./bpfsym), perf.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPS = int(os.environ.get('REPS', '5'))
BPFSYMS = os.environ.get('BPFSYMS', './bpfsym').split()
PERF = shutil.which('perf')


def run(argv, cwd):
    """Launch @argv; (its CLOCK_MONOTONIC start in ns, its user+sys s, status)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors='replace')
    if p.returncode != 0:
        sys.exit(f'startup.py: {" ".join(argv)} failed ({p.returncode}): {err.strip()[-300:]}')
    return t0, ru.ru_utime + ru.ru_stime


def first_time(script_argv, cwd):
    """The first sample's time (s, CLOCK_MONOTONIC) in a perf-script text."""
    out = subprocess.run(script_argv, cwd=cwd, capture_output=True, text=True).stdout
    times = [float(m.group(1)) for m in re.finditer(r'^ *\S.*?\s(\d+\.\d+):', out, re.M)]
    return min(times) if times else None


def profilers(tmp):
    """(name, record argv for SECS, perf-script argv) of each profiler."""
    out = []
    for b in BPFSYMS:
        b = os.path.abspath(b)
        data = os.path.join(tmp, 'b.data')
        out.append((b, lambda secs, b=b, data=data: [b, 'record', '-a', '-F', '99', '-q', '-d', str(secs), '-o', data],
                    [b, 'report', data, '--perf-script']))
    if PERF:
        data = os.path.join(tmp, 'p.data')
        out.append(('perf -a -g', lambda secs, data=data: [PERF, 'record', '-a', '-g', '-F', '99', '-k', 'mono', '-q',
                                                         '-o', data, '--', 'sleep', str(secs)],
                    [PERF, 'script', '-i', data, '-F', 'comm,tid,time']))
    return out


def main():
    if os.geteuid() != 0:
        sys.exit('startup.py: must run as root')
    tmp = tempfile.mkdtemp(prefix='bpfsym-startup.')
    # SCHED_IDLE: a tick always finds them, the profiler never waits for them.
    burners = [subprocess.Popen(['chrt', '-i', '0', '/bin/sh', '-c', 'while :; do :; done'])
               for _ in range(os.cpu_count() or 1)]
    res = {}
    try:
        for rep in range(REPS):
            for name, rec, script in profilers(tmp):
                t0, _ = run(rec(1), tmp)
                first = first_time(script, tmp)
                _, cpu = run(rec(0.1), tmp)
                r = res.setdefault(name, ([], []))
                r[0].append((first * 1e9 - t0) / 1e6 if first else float('nan'))
                r[1].append(cpu)
    finally:
        for b in burners:
            b.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    env = os.environ.get('BPFSYM_FORCE_FALLBACK')
    print(f'# startup.py: {REPS} runs each, medians; {os.cpu_count()} CPUs, kernel {os.uname().release}'
          + (f'; BPFSYM_FORCE_FALLBACK={env}' if env else ''))
    print('| profiler | first sample after launch, ms | start-up CPU (a 0.1 s run), s |')
    print('|---|---|---|')
    for name, (first, cpu) in res.items():
        print(f'| {name} | {statistics.median(first):.0f} (min {min(first):.0f}, max {max(first):.0f}) '
              f'| {statistics.median(cpu):.3f} |')


if __name__ == '__main__':
    main()
