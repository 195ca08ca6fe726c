#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# seeds-http.sh DIR: request heads for fuzz_http, the ones scrapers send
# (curl, go tool pprof, Parca, Alloy, Prometheus) and broken ones.  Each
# line below is one seed, with \r and \n written as escapes.
set -u
d=$1
i=0
while IFS= read -r line; do
	i=$((i + 1))
	printf '%b' "$line" > "$d/r$i"
done <<'EOF2'
GET /debug/pprof/profile?seconds=3 HTTP/1.1\r\nHost: 127.0.0.1:6060\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n
GET /debug/pprof/profile?seconds=10 HTTP/1.1\r\nHost: localhost:6060\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n
GET /metrics HTTP/1.1\r\nHost: h:6060\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n
HEAD / HTTP/1.0\n\n
\r\nGET /?a=%41+b&&c&d= HTTP/1.0\r\n\r\n
GET /debug/pprof/profile?seconds=banana HTTP/1.0\r\n\r\n
POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc
GET / HTTP/2.0\r\n\r\n
GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n
GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n
GET /%zz HTTP/1.0\r\n\r\n
GET /%00 HTTP/1.0\r\n\r\n
GET / HTTP/1.0\r\nA: b\rc\r\n\r\n
GET /debug/pprof/profile?seconds=3
EOF2
