#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-httpconn.sh DIR: programs for fuzz_httpconn (its header says the
# ops: A adopt, S send, H half-close, R read, C close, T turn, W wake,
# D delay), one a seed: the scrapers' requests on each kind of address, a
# DNS-rebinding Host, a forbidden unix peer, a parked answer, big answers
# read slowly, a head dribbled past its deadline, the per-peer cap, junk.
# Python (the build's, as scripts/check-bpf-*.py) for the byte strings.
set -u
exec python3 - "$1" <<'EOF2'
import sys

d = sys.argv[1]


def req(host, path):
    return b"GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n" % (
        path.encode(), host.encode())


def send(k, data):
    out = b""
    while data:
        out += b"S" + bytes([k, min(len(data), 255)]) + data[:255]
        data = data[255:]
    return out


A = lambda cfg: b"A" + bytes([cfg])
R = lambda k: b"R" + bytes([k])
C = lambda k: b"C" + bytes([k])
D = lambda n: b"D" + bytes([n])
seeds = [
    A(0) + send(0, req("127.0.0.1:6060", "/metrics")) + b"TTT" + R(0) + C(0) + b"T",
    A(1) + send(0, req("[::1]:6060", "/debug/pprof/profile?seconds=1")) + b"TT" + R(0),
    A(2) + send(0, req("10.1.2.3", "/")) + b"TT" + R(0),
    A(0) + send(0, req("evil.example:6060", "/metrics")) + b"TT" + R(0),
    A(3) + send(0, req("evil.example", "/metrics")) + b"TT" + R(0),
    A(0x13) + send(0, req("localhost", "/metrics")) + b"TT" + R(0),
    A(0) + send(0, req("localhost:6060", "/park")) + b"TTWT" + R(0) + C(0) + b"T",
    A(0) + send(0, req("localhost:6060", "/park")) + b"TT" + C(0) + b"TT",
    A(0) + send(0, req("localhost:6060", "/big")) + (b"T" + R(0)) * 4 + D(150) + b"T",
    A(0) + send(0, req("localhost:6060", "/fd")) + (b"T" + R(0)) * 4,
    A(0) + send(0, req("localhost:6060", "/short")) + (b"T" + R(0)) * 4,
    A(0) + send(0, b"GET ") + D(10) + send(0, b"/") + D(10) * 9 + R(0),
    A(0) * 9 + A(4) + b"T" + R(8) + R(9),
    (A(0) + A(4) + A(8) + A(12)) * 4 + D(11) + A(1) + b"T",
    A(0) + send(0, b"HEAD /metrics HTTP/1.0\r\n\r\n") + b"TT" + R(0),
    A(0) + send(0, b"GET /metrics HTTP/1.1\r\n\r\n") + b"TT" + R(0),
    A(0) + send(0, b"POST /x HTTP/1.1\r\nHost: 127.0.0.1:6060\r\n\r\nabc") + b"H\0TT" + R(0),
    A(0) + send(0, b"\x01\x02 junk\r\n\r\n") + b"T" + R(0),
]
for i, s in enumerate(seeds):
    with open("%s/p%d" % (d, i + 1), "wb") as f:
        f.write(s)
EOF2
