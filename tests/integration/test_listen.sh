#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `record --listen`: the pull endpoint, checked with the clients that use
# it (curl, go tool pprof, the URLs Parca and Alloy build from
# examples/parca.yaml and examples/config.alloy) and with clients that
# misbehave, while tests/fixtures/hot burns two threads, the oracle: its
# own symbols (hot_a, hot_b, hot_c, 50/30/20 % of its work) and its CPU time.
#  - port_in_use: a listener already on the port: exit 2, one line naming
#    the address, before any BPF is loaded (with -v: no libbpf line) and
#    no file written; a malformed address likewise;
#  - profile_top: `go tool pprof -top URL?seconds=3` shows hot_a, hot_b,
#    hot_c as the three hottest functions under run_workload, hot_a first;
#  - window: the profile's headers are Go's, its time is the request's,
#    its duration the seconds asked, its samples those of that window only
#    (no more than /metrics counted meanwhile, most of them);
#  - metrics: exposition format (HELP and TYPE per family, counters
#    _total, the content type), samples rising between two scrapes;
#  - bad_requests: banana and 1.5 seconds, seconds past the write timeout,
#    an unknown path, POST, a 3000-byte URL, a 10 KiB header, HTTP/2.0,
#    binary junk: 400/404/405/414/431/505 with text bodies, then a normal
#    answer;
#  - concurrent: three 2 s profiles at once all succeed; nine: eight
#    succeed (the tap limit) and one is 503; no window memfd stays open;
#  - abuse: 100 connections at once (those past 16 get 503), a half-open
#    client (closed at the 10 s head deadline), two slow readers, junk:
#    meanwhile the samples counter keeps rising and matches hot's CPU time;
#    a client gone early frees its window at once;
#  - parca, alloy: each file parsed (YAML; a strict reader of Alloy's
#    block syntax), only the CPU profile scraped, and its URL fetched as
#    the scraper builds it (target, path, seconds) with curl: pprof finds
#    hot_a in it;
#  - host: a DNS-rebinding page's request (Host: evil.example:PORT) is
#    421, for /metrics and a profile alike; the bound address with and
#    without the port, and localhost:PORT, are served; HTTP/1.1 without
#    Host is 400;
#  - per_peer: 8 silent connections from 127.0.0.1: a 9th from there is
#    503, a client from 127.0.0.2 is served;
#  - slow_client: a head sent a byte a second is closed at the 10 s head
#    deadline, and /metrics asked every half second meanwhile is answered
#    within 1 s each time; 16 such heads from two addresses (every slot):
#    a new client is still answered within 1 s;
#  - sigint: SIGINT ends the recording with status 0 and a complete file
#    with samples in every second of the abuse;
#  - targets: -- COMMAND with -d, and -p PID, each serve a profile of
#    their target only;
#  - offcpu: /debug/pprof/offcpu (issue 28): of the main recording (no
#    --off-cpu), 404 saying to record with --off-cpu, and listed on the
#    index; of `record --off-cpu -- sh -c 'loop of sleep 0.05'`, a 5 s
#    window is a pprof whose default sample type is off_cpu, whose
#    off-CPU time of comm sleep is 40 to 120 % of the window's seconds
#    (one sleep process at a time, asleep but while it forks and execs:
#    ~65 % here; the recorder sums in BPF and writes the sums about once a
#    second, so a window's edges are that loose), in a stack through a
#    nanosleep kernel function, state sleeping;
#  - ipv6: [::1]:PORT serves;
#  - unix: --listen unix:PATH --listen-group GROUP: the socket is 0660 in
#    GROUP; root and a uid in GROUP (setpriv) are served, a uid outside it
#    cannot connect, and with the mode opened to everyone is 403 (the
#    peer-credential check); root holding 8 connections gets a 503 while
#    the member is served (per uid); SIGINT: exit 0, the socket removed;
#  - unix_refuse: a file or a symlink at PATH: exit 2, one line, untouched;
#    --listen-group with a TCP address: exit 2.
. "$(dirname "$0")/lib.sh"
lib_init integration/listen_port_in_use integration/listen_profile_top integration/listen_window \
	integration/listen_metrics integration/listen_bad_requests integration/listen_concurrent \
	integration/listen_abuse integration/listen_parca integration/listen_alloy integration/listen_sigint \
	integration/listen_targets integration/listen_ipv6 integration/listen_host integration/listen_per_peer \
	integration/listen_slow_client integration/listen_unix integration/listen_unix_refuse \
	integration/listen_offcpu

# Debian's python3 and its python3-yaml (the python3 on PATH may be another build).
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "/usr/bin/python3 not installed"
for tool in curl go nm; do
	command -v $tool > /dev/null 2>&1 || skip_all "'$tool' not installed"
done
"$PY" -c 'import yaml' 2> /dev/null || skip_all "python3-yaml not installed"
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS='' GOPROXY=off \
	GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR="$T/pprof" PPROF_BINARY_PATH="$T/nobin"
go tool pprof -h > "$T/pprof.help" 2>&1 || skip_all "'go tool pprof' does not run"
pprof() {
	run_to 60 go tool pprof "$@" 2> "$T/pprof.err"
}
CLIENT="$PY $BPFSYM_TOP/tests/integration/listen_client.py"
need_fixture hot hot
# The fixture's own hot functions: the oracle's names.
nm "$T/hot" | awk '$2 ~ /^[tT]$/ && $3 ~ /^hot_[abc]$/ { print $3 }' | sort > "$T/hot.syms"
[ "$(cat "$T/hot.syms" | tr '\n' ' ')" = "hot_a hot_b hot_c " ] || fail_all "nm finds no hot_a, hot_b, hot_c in the fixture"

# metric NAME [PORT]: the value of sample line NAME (with its labels) from /metrics.
metric() {
	curl -sS --max-time 10 "http://127.0.0.1:${2:-$port}/metrics" | awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print "none" }'
}
# hot_cpu PID: its user + system CPU in clock ticks.
hot_cpu() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
# top3 FILE: the three hottest functions (flat) under run_workload, in order.
top3() {
	pprof -top -nodecount=200 -sample_index=samples -focus=run_workload "$1" |
		awk 'found && NF >= 6 { print $6; if (++n == 3) exit } $1 == "flat" { found = 1 }'
}

# bg_rec NAME ARGS...: `bpfsym record ARGS` in the background (sh execs it: $BG_PID is
# the recorder), its stderr in $T/NAME.err.
bg_rec() {
	br_err=$T/$1.err
	shift
	bg_start sh -c 'f=$1; shift; exec "$@" 2> "$f"' sh "$br_err" "$BPFSYM" record "$@"
}

# ---- port in use: bound before anything else.
name=integration/listen_port_in_use
p=$($CLIENT freeport)
bg_start sh -c 'exec "$@" > "$0"' "$T/hold.out" $CLIENT hold "$p" 60
holder=$BG_PID
wait_until 10 grep -q listening "$T/hold.out"
t0=$(now_ms)
run_to 30 "$BPFSYM" record -a -q -v -d 5 --listen "127.0.0.1:$p" -o "$T/inuse.data" 2> "$T/inuse.err"
rc=$?
ms=$(( $(now_ms) - t0 ))
stop "$holder"
if [ $rc -ne 2 ]; then
	fail $name "exit status $rc with the port in use, expected 2"
elif [ "$(nlines "$T/inuse.err")" -ne 1 ] || ! grep -q "127.0.0.1:$p" "$T/inuse.err" || ! grep -qi "in use" "$T/inuse.err"; then
	fail $name "expected one line naming 127.0.0.1:$p and 'in use' (with -v: no libbpf line), got $(nlines "$T/inuse.err") lines"
	show "$T/inuse.err"
elif [ -e "$T/inuse.data" ]; then
	fail $name "a recording file was created"
else
	run_to 10 "$BPFSYM" record -a -q --listen "127.0.0.1:65536" -o "$T/bad.data" 2> "$T/badaddr.err"
	rc=$?
	if [ $rc -ne 2 ] || [ "$(nlines "$T/badaddr.err")" -ne 1 ]; then
		fail $name "--listen 127.0.0.1:65536: status $rc, $(nlines "$T/badaddr.err") lines (expected 2, one)"
		show "$T/badaddr.err"
	else
		pass $name
		note "port in use: '$(cat "$T/inuse.err")' after $ms ms"
	fi
fi

# ---- the recording the next tests share: the whole system, hot burning throughout.
bg_start "$T/hot" 600 2
hot=$BG_PID
port=$($CLIENT freeport)
bg_rec main -a -F 49 -q --listen "127.0.0.1:$port" -o "$T/main.data"
rec=$BG_PID
if ! wait_until 60 sh -c "curl -sf --max-time 2 http://127.0.0.1:$port/metrics | grep -q '^bpfsym_recording 1'"; then
	fail_all "the endpoint did not come up within 60 s"
fi

name=integration/listen_profile_top
pprof -top -nodecount=200 -sample_index=samples -focus=run_workload \
	"http://127.0.0.1:$port/debug/pprof/profile?seconds=3" > "$T/top.url"
got=$(awk 'found && NF >= 6 { print $6; if (++n == 3) exit } $1 == "flat" { found = 1 }' "$T/top.url" | tr '\n' ' ')
first=$(echo "$got" | awk '{ print $1 }')
sorted=$(echo "$got" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
if [ "$sorted" = "$(tr '\n' ' ' < "$T/hot.syms")" ] && [ "$first" = hot_a ]; then
	pass $name
else
	fail $name "top three under run_workload: '$got' (expected hot_a first, then hot_b and hot_c)"
	show "$T/top.url"
	show "$T/pprof.err"
fi

# ---- the window: headers, time, duration, its samples only.
name=integration/listen_window
m0=$(metric bpfsym_samples_total)
treq=$(date +%s.%N)
curl -sS --max-time 30 -D "$T/w.hdr" -o "$T/w.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=2"
m1=$(metric bpfsym_samples_total)
tend=$(date +%s.%N)
pprof -raw "$T/w.pb.gz" > "$T/w.raw"
pprof -top -sample_index=samples "$T/w.pb.gz" > "$T/w.top"
n=$(sed -n 's/.*Total samples = \([0-9]*\).*/\1/p' "$T/w.top")
dur=$(awk '$1 == "Duration:" { print $2 }' "$T/w.raw")
tw=$(date -d "$(sed -n 's/^Time: \(.*\) UTC$/\1/p' "$T/w.raw")" +%s.%N 2> /dev/null)
magic=$(od -An -tx1 -N2 "$T/w.pb.gz" | tr -d ' ')
why=
grep -qi '^Content-Type: application/octet-stream' "$T/w.hdr" || why="$why; no Content-Type application/octet-stream"
grep -qi '^Content-Disposition: attachment; filename="profile"' "$T/w.hdr" || why="$why; no Content-Disposition"
grep -qi '^X-Content-Type-Options: nosniff' "$T/w.hdr" || why="$why; no X-Content-Type-Options"
[ "$magic" = 1f8b ] || why="$why; not gzip ($magic)"
fcmp "${dur:-0}" ge 1.95 && fcmp "${dur:-0}" le 2.6 || why="$why; duration '$dur' for seconds=2"
# The window opens at the recorder's next tick (<= 100 ms) after the
# request: within 1 s of it, or of all the call took beyond the window
# where curl itself is slow to start (under TCG, 1.5 s).
span=$(awk -v a="$treq" -v b="$tend" 'BEGIN { printf "%.3f", b - a }')
late=$(awk -v s="$span" -v w="${dur:-2}" 'BEGIN { l = s - w; printf "%.3f", (l > 1) ? l : 1 }')
dt=$(awk -v a="${tw:-0}" -v b="$treq" 'BEGIN { printf "%.3f", a - b }')
fcmp "$dt" ge -0.05 && fcmp "$dt" le "$late" || why="$why; profile time $tw, requested at $treq, answered $span s later"
# At most what the recorder read meanwhile (+ one tick of publishing lag),
# and most of what it read in a window's share of that time (the call is
# longer than the window: seconds longer under TCG).
d=$(awk -v a="$m0" -v b="$m1" 'BEGIN { print b - a }')
dw=$(awk -v d="$d" -v s="$span" -v w="${dur:-2}" 'BEGIN { printf "%d", (s > w) ? d * w / s : d }')
fcmp "${n:-0}" gt 0 && fcmp "${n:-0}" le "$((d + 20))" && fcmp "${n:-0}" ge "$(awk -v d="$dw" 'BEGIN { print 0.6 * d - 20 }')" ||
	why="$why; $n samples in the window, $d read meanwhile ($dw in the window's share of the $span s call)"
if [ -z "$why" ]; then
	pass $name
	note "window: $n samples in $dur s, opened $dt s after the request (the recorder read $d meanwhile, $m1 in all)"
else
	fail $name "${why#; }"
	show "$T/w.hdr"
fi

# ---- metrics.
name=integration/listen_metrics
curl -sS --max-time 10 -D "$T/m.hdr" -o "$T/m1.txt" "http://127.0.0.1:$port/metrics"
sleep 1.5
curl -sS --max-time 10 -o "$T/m2.txt" "http://127.0.0.1:$port/metrics"
bad=$(awk '
	/^# HELP / { help[$3] = 1; next }
	/^# TYPE / { if (!help[$3]) print "TYPE before HELP: " $3; type[$3] = $4
		     if ($4 == "counter" && $3 !~ /_total$/) print "counter without _total: " $3; next }
	/^#/ { next }
	{
		name = $1; sub(/\{.*/, "", name)
		if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? -?[0-9.e+]+$/)
			print "bad line: " $0
		else if (!type[name])
			print "no TYPE for " name
		n++
	}
	END { if (n < 20) print "only " n " samples" }' "$T/m1.txt")
s1=$(awk '$1 == "bpfsym_samples_total" { print $2 }' "$T/m1.txt")
s2=$(awk '$1 == "bpfsym_samples_total" { print $2 }' "$T/m2.txt")
for want in 'bpfsym_lost_samples_total{cause="ring_buffer_full"}' process_cpu_seconds_total \
	process_resident_memory_bytes bpfsym_processes_tracked bpfsym_output_bytes bpfsym_writer_index_bytes \
	'bpfsym_http_requests_total{code="200"}' bpfsym_first_samples_total \
	'bpfsym_lost_samples_total{cause="first_sample_work"}' 'bpfsym_offcpu_intervals_total{outcome="summed"}' \
	'bpfsym_offcpu_seconds_total{outcome="lost"}'; do
	grep -qF "$want " "$T/m1.txt" || bad="$bad
missing $want"
done
if ! grep -qi '^Content-Type: text/plain; version=0.0.4' "$T/m.hdr"; then
	fail $name "Content-Type is not the text exposition format's"
elif [ -n "$bad" ]; then
	fail $name "$(echo "$bad" | grep . | head -3 | tr '\n' ';')"
elif ! fcmp "${s2:-0}" gt "${s1:-0}"; then
	fail $name "bpfsym_samples_total did not rise in 1.5 s ($s1 -> $s2)"
else
	pass $name
fi

# ---- bad requests.
name=integration/listen_bad_requests
code() {	# code EXPECTED BODY_WORD CURL_ARGS...: one check
	want=$1
	word=$2
	shift 2
	got=$(curl -sS --max-time 10 -o "$T/bad.body" -w '%{http_code}' "$@" 2> /dev/null)
	if [ "$got" != "$want" ] || ! grep -qi -- "$word" "$T/bad.body"; then
		why="$why; $* -> $got '$(head -c 80 "$T/bad.body")' (expected $want, '$word')"
	fi
}
why=
u=http://127.0.0.1:$port
code 400 seconds "$u/debug/pprof/profile?seconds=banana"
code 400 seconds "$u/debug/pprof/profile?seconds=1.5"
code 400 WriteTimeout "$u/debug/pprof/profile?seconds=300"
code 404 "not found" "$u/debug/pprof/heap"
code 405 method -X POST "$u/metrics"
code 414 "too long" "$u/$(head -c 3000 /dev/zero | tr '\0' a)"
code 431 large -H "X-Big: $(head -c 10000 /dev/zero | tr '\0' b)" "$u/metrics"
st=$($CLIENT raw "$port" 'GET /metrics HTTP/2.0\r\n\r\n' | awk '$1 == "status" { print $2 }')
[ "$st" = 505 ] || why="$why; HTTP/2.0 -> $st"
st=$($CLIENT raw "$port" '\x00\x01\x02 junk\r\n\r\n' | awk '$1 == "status" { print $2 }')
[ "$st" = 400 ] || why="$why; junk -> $st"
curl -sS -I --max-time 10 "$u/debug/pprof/profile?seconds=banana" > "$T/bad.head"
grep -q '^HTTP/1.1 400' "$T/bad.head" || why="$why; HEAD of a bad duration: $(head -1 "$T/bad.head")"
code 200 bpfsym_samples_total "$u/metrics"
if [ -z "$why" ]; then pass $name; else fail $name "${why#; }"; fi

# ---- concurrent profiles: up to the tap limit, then 503.
name=integration/listen_concurrent
c3=$($CLIENT concurrent "$port" 3 2 | sed 's/^codes //')
c9=$($CLIENT concurrent "$port" 9 2 | sed 's/^codes //')
sleep 0.5
# Each window had a memfd, its pprof another: all closed again once answered.
memfds=$(ls -l "/proc/$rec/fd" 2> /dev/null | grep -c 'memfd:bpfsym')
if [ "$c3" = "200 200 200" ] && [ "$c9" = "200 200 200 200 200 200 200 200 503" ]; then
	if [ "$memfds" -eq 0 ]; then
		pass $name
	else
		fail $name "$memfds window memfds still open after 11 windows were answered"
	fi
else
	fail $name "3 at once: '$c3'; 9 at once: '$c9' (expected eight 200 and one 503)"
fi

# ---- the scrapers' configs, fetched while the abuse below runs (they hold 2 of the 16 slots).
cfg_fetch() {	# cfg_fetch KIND FILE: parse, build the URL, fetch it in the background
	$CLIENT "$1" "$BPFSYM_TOP/examples/$2" > "$T/$1.facts" 2> "$T/$1.parse.err" || return 1
	f() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$T/$3.facts"; }
	target=$(f targets "" "$1")
	secs=$(f seconds "" "$1")
	tmo=$(f timeout "" "$1")
	# The target's port is the example's (7470); the test's recorder is on $port.
	url="$(f scheme "" "$1")://${target%:*}:$port$(f path "" "$1")?seconds=$secs"
	echo "$url" > "$T/$1.url"
	curl -sS --max-time $((secs + ${tmo:-10} + 10)) -o "$T/$1.pb.gz" -w '%{http_code}' "$url" > "$T/$1.code" 2>&1 &
	echo $! > "$T/$1.pid"
}
cfg_check() {	# cfg_check KIND NAME ENABLED: what was fetched
	if [ -s "$T/$1.parse.err" ] || [ ! -s "$T/$1.facts" ]; then
		fail "$2" "examples: $(head -1 "$T/$1.parse.err")"
		return
	fi
	wait "$(cat "$T/$1.pid")" 2> /dev/null
	en=$(awk '$1 == "enabled_profiles" { $1 = ""; sub(/^ /, ""); print }' "$T/$1.facts")
	dl=$(awk '$1 == "delta" { print $2 }' "$T/$1.facts")
	if [ "$en" != "$3" ] || [ "$dl" != true ]; then
		fail "$2" "profiles scraped: '$en', delta '$dl' (expected '$3' only, delta true)"
	elif [ "$(cat "$T/$1.code")" != 200 ]; then
		fail "$2" "$(cat "$T/$1.url") -> $(cat "$T/$1.code")"
	elif ! top3 "$T/$1.pb.gz" | grep -qx hot_a; then
		fail "$2" "no hot_a in the profile from $(cat "$T/$1.url")"
		show "$T/pprof.err"
	else
		pass "$2"
		note "$2: $(cat "$T/$1.url")"
	fi
}
cfg_fetch parca parca.yaml
cfg_fetch alloy config.alloy

# ---- abuse, while sampling goes on.
name=integration/listen_abuse
c0=$(hot_cpu "$hot")
m0=$(metric bpfsym_samples_total)
$CLIENT abuse "$port" 14 > "$T/abuse.out" 2>&1 &
abuser=$!
sleep 3
ma=$(metric bpfsym_samples_total)
sleep 6
mb=$(metric bpfsym_samples_total)
wait $abuser
m1=$(metric bpfsym_samples_total)
c1=$(hot_cpu "$hot")
hz=$(getconf CLK_TCK)
# Samples the recorder read at least as many as hot's CPU time at 49 Hz, halved for margin.
need=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { printf "%d", 0.5 * 49 * (b - a) / hz }')
crowd=$(awk '$1 == "crowd_refused_503" { print $2 }' "$T/abuse.out")
half=$(awk '$1 == "half_open_closed_after" { print $2 }' "$T/abuse.out")
junk=$(awk '$1 == "junk_status" { print $2 }' "$T/abuse.out")
why=
fcmp "${crowd:-0}" ge 80 || why="$why; only ${crowd:-0} of 100 crowding connections got a 503"
[ "$half" != never ] && fcmp "${half:-99}" ge 9.5 && fcmp "${half:-99}" le 13 || why="$why; half-open client closed after '$half' s (the head deadline is 10 s)"
[ "$junk" = 400 ] || why="$why; junk answered '$junk'"
fcmp "$mb" gt "$ma" || why="$why; samples counter stuck during the abuse ($ma -> $mb)"
fcmp "$(awk -v a="$m0" -v b="$m1" 'BEGIN { print b - a }')" ge "$need" || why="$why; $((${m1%.*} - ${m0%.*})) samples read during the abuse, hot alone should give $need"
# A client gone early: its window is dropped at once, not kept for its 20 s.
$CLIENT early "$port" 20 1 > /dev/null
wait_until 3 sh -c "[ \"\$(curl -sS --max-time 2 http://127.0.0.1:$port/metrics | awk '\$1 == \"bpfsym_profile_windows\" { print \$2 }')\" = 0 ]" ||
	why="$why; the window of a client gone early is still open"
if [ -z "$why" ]; then
	pass $name
	note "abuse: $crowd of 100 got 503, half-open closed after $half s, $((${m1%.*} - ${m0%.*})) samples read meanwhile (need $need)"
else
	fail $name "${why#; }"
	show "$T/abuse.out"
fi

cfg_check parca integration/listen_parca process_cpu
cfg_check alloy integration/listen_alloy profile.process_cpu

# ---- Host: DNS rebinding.  A page at evil.example whose name now resolves
# to 127.0.0.1 makes the browser send its own name as Host; never served.
name=integration/listen_host
why=
# host_status HOSTLINE PATH: the status of a raw HTTP/1.1 request with that Host line ("" for none).
host_status() {
	$CLIENT raw "$port" "GET $2 HTTP/1.1\r\n$1\r\n" | awk '$1 == "status" { print $2 }'
}
c0=$(metric 'bpfsym_http_requests_total{code="421"}')
for h in "evil.example:$port" "evil.example" "127.0.0.1.evil.example:$port"; do
	st=$(host_status "Host: $h\r\n" /metrics)
	[ "$st" = 421 ] || why="$why; Host: $h -> $st (expected 421)"
done
st=$(host_status "Host: evil.example:$port\r\n" "/debug/pprof/profile?seconds=1")
[ "$st" = 421 ] || why="$why; a profile with Host: evil.example:$port -> $st (expected 421)"
for h in "127.0.0.1:$port" "127.0.0.1" "localhost:$port"; do
	st=$(host_status "Host: $h\r\n" /metrics)
	[ "$st" = 200 ] || why="$why; Host: $h -> $st (expected 200)"
done
st=$(host_status "" /metrics)
[ "$st" = 400 ] || why="$why; HTTP/1.1 without Host -> $st (expected 400)"
c1=$(metric 'bpfsym_http_requests_total{code="421"}')
[ "$c1" != none ] && fcmp "$c1" ge "$(awk -v a="$c0" 'BEGIN { print a + 4 }')" || why="$why; 421 answers counted: $c0 -> $c1"
if [ -z "$why" ]; then pass $name; else fail $name "${why#; }"; fi

# ---- per peer: one address holds at most half the slots.
name=integration/listen_per_peer
$CLIENT perpeer "$port" 8 > "$T/perpeer.out" 2>&1
ex=$(awk '$1 == "extra_status" { print $2 }' "$T/perpeer.out")
ot=$(awk '$1 == "other_status" { print $2 }' "$T/perpeer.out")
if [ "$ex" = 503 ] && [ "$ot" = 200 ]; then
	pass $name
else
	fail $name "8 held from 127.0.0.1: a 9th from there got '$ex' (expected 503), one from 127.0.0.2 '$ot' (expected 200)"
	show "$T/perpeer.out"
fi

# ---- slow clients: a byte a second holds nobody out.
name=integration/listen_slow_client
why=
$CLIENT dribble "$port" 13 > "$T/dribble.out" 2>&1
closed=$(awk '$1 == "dribbler_closed_after" { print $2 }' "$T/dribble.out")
codes=$(awk '$1 == "probe_codes" { $1 = ""; sub(/^ /, ""); print }' "$T/dribble.out")
worst=$(awk '$1 == "probe_worst_ms" { print $2 }' "$T/dribble.out")
[ "$closed" != never ] && fcmp "${closed:-99}" ge 9.5 && fcmp "${closed:-99}" le 12 ||
	why="$why; the dribbler was closed after '$closed' s (the head deadline is 10 s)"
[ "$codes" = 200 ] || why="$why; /metrics meanwhile answered '$codes'"
fcmp "${worst:-99999}" lt 1000 || why="$why; /metrics meanwhile took up to $worst ms"
sleep 2.5	# the dribbler's slot and the probes' lingering ones free
$CLIENT slowloris "$port" 16 > "$T/slowloris.out" 2>&1
ps=$(awk '$1 == "probe_status" { print $2 }' "$T/slowloris.out")
pm=$(awk '$1 == "probe_ms" { print $2 }' "$T/slowloris.out")
[ "$ps" = 200 ] && fcmp "${pm:-99999}" lt 1000 || why="$why; 16 slow heads in every slot: a new client got '$ps' after $pm ms"
if [ -z "$why" ]; then
	pass $name
	note "slow client: closed after $closed s, /metrics meanwhile at most $worst ms; beside 16 slow heads: $pm ms"
else
	fail $name "${why#; }"
	show "$T/dribble.out"
	show "$T/slowloris.out"
fi

# ---- SIGINT: status 0, a complete file, samples in every second of the abuse.
name=integration/listen_sigint
kill -INT "$rec"
reap "$rec"
rc=$REAP_RC
run_to 120 "$BPFSYM" report "$T/main.data" --perf-script > "$T/main.script" 2> "$T/main.report.err"
rrc=$?
s0=$(awk '$1 == "start_mono" { print $2 }' "$T/abuse.out")
s1=$(awk '$1 == "end_mono" { print $2 }' "$T/abuse.out")
gaps=$(awk -v s0="$s0" -v s1="$s1" '
	/^[^ \t].* [0-9]+\.[0-9]+: / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0; if (t >= s0 && t < s1) n[int(t - s0)]++ } }
	END { for (i = 0; i < int(s1 - s0); i++) if (!n[i]) g = g " " i; print g }' "$T/main.script")
if [ "$rc" -ne 0 ]; then
	fail $name "record exited with status $rc on SIGINT"
	show "$T/main.err"
elif [ $rrc -ne 0 ] || grep -qi truncated "$T/main.report.err"; then
	fail $name "the recording does not read as complete (status $rrc)"
	show "$T/main.report.err"
elif [ -z "$s0" ] || [ -n "$gaps" ]; then
	fail $name "seconds of the abuse without a sample in the file:${gaps:- (no abuse times)}"
else
	pass $name
fi
stop "$hot"

# ---- other targets: a command with a duration, and -p.
name=integration/listen_targets
why=
p2=$($CLIENT freeport)
bg_rec cmd -F 49 -q -d 8 --listen "127.0.0.1:$p2" -o "$T/cmd.data" -- "$T/hot" 7 2
r2=$BG_PID
wait_until 30 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$p2/metrics"
curl -sS --max-time 30 -o "$T/cmd.pb.gz" "http://127.0.0.1:$p2/debug/pprof/profile?seconds=2"
top3 "$T/cmd.pb.gz" | grep -qx hot_a || why="$why; -- COMMAND: no hot_a"
pprof -tags "$T/cmd.pb.gz" > "$T/cmd.tags"
grep -q 'comm:' "$T/cmd.tags" && ! awk '/^ comm:/ { f = 1; next } f && /^ [a-z]+:/ { f = 0 } f && NF >= 3' "$T/cmd.tags" | grep -v hot | grep -q . ||
	why="$why; -- COMMAND: comms other than hot: $(awk '/comm:/,/pid:/' "$T/cmd.tags" | tr -s ' \n' ' ' | head -c 200)"
reap "$r2"
[ "$REAP_RC" -eq 0 ] || why="$why; -- COMMAND -d 8: status $REAP_RC"
bg_start "$T/hot" 30 1
h2=$BG_PID
p3=$($CLIENT freeport)
bg_rec pid -F 49 -q -d 6 -p "$h2" --listen "127.0.0.1:$p3" -o "$T/pid.data"
r3=$BG_PID
wait_until 30 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$p3/metrics"
curl -sS --max-time 30 -o "$T/pid.pb.gz" "http://127.0.0.1:$p3/debug/pprof/profile?seconds=2"
pprof -tags "$T/pid.pb.gz" > "$T/pid.tags"
pids=$(awk '/^ pid:/ { f = 1; next } f && /^ [a-z]+:/ { f = 0 } f && $NF ~ /^[0-9]+$/ { print $NF }' "$T/pid.tags" | sort -u | tr '\n' ' ')
[ "$pids" = "$h2 " ] || why="$why; -p $h2: pids in the profile: '$pids'"
reap "$r3"
[ "$REAP_RC" -eq 0 ] || why="$why; -p -d 6: status $REAP_RC"
stop "$h2"
if [ -z "$why" ]; then pass $name; else fail $name "${why#; }"; show "$T/pid.tags"; fi

# ---- off-CPU time: 404 without --off-cpu; with it, the window's sleeping time.
name=integration/listen_offcpu
why=
p4=$($CLIENT freeport)
bg_rec offnone -F 49 -q -d 8 --listen "127.0.0.1:$p4" -o "$T/offnone.data" -- sleep 5
r4=$BG_PID
wait_until 30 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$p4/metrics"
st=$(curl -sS --max-time 10 -o "$T/offnone.body" -w '%{http_code}' "http://127.0.0.1:$p4/debug/pprof/offcpu?seconds=1")
[ "$st" = 404 ] && grep -q 'record with --off-cpu' "$T/offnone.body" ||
	why="$why; without --off-cpu: status $st, '$(head -c 200 "$T/offnone.body")' (expected 404 saying to record with --off-cpu)"
curl -sS --max-time 10 "http://127.0.0.1:$p4/" | grep -q '^/debug/pprof/offcpu?seconds=N ' || why="$why; not on the index"
reap "$r4"
p5=$($CLIENT freeport)
# The recorder's --off-cpu is the lead's (issue 28): this part needs it.
bg_rec offcpu -F 49 -q -d 14 --off-cpu --listen "127.0.0.1:$p5" -o "$T/offcpu.data" -- \
	sh -c 'i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done'
r5=$BG_PID
wait_until 30 sh -c "curl -sf --max-time 2 -o /dev/null http://127.0.0.1:$p5/metrics || ! kill -0 $r5"
curl -sS --max-time 30 -o "$T/off.pb.gz" -w '%{http_code}' "http://127.0.0.1:$p5/debug/pprof/offcpu?seconds=5" > "$T/off.code"
[ "$(cat "$T/off.code")" = 200 ] || why="$why; --off-cpu: status $(cat "$T/off.code"): $(head -c 200 "$T/off.pb.gz")"
pprof -raw "$T/off.pb.gz" > "$T/off.raw"
grep -q '^Samples:' "$T/off.raw" && sed -n '/^Samples:/{n;p;q}' "$T/off.raw" | grep -q 'off_cpu/nanoseconds' ||
	why="$why; no off_cpu sample type"
pprof -top -nodecount=10000 -unit=ms -tagfocus=comm=sleep "$T/off.pb.gz" > "$T/off.top"
grep -q '^Type: off_cpu' "$T/off.top" || why="$why; the default sample type is not off_cpu"
ms=$(sed -n 's/^Showing nodes accounting for \([0-9.]*\)ms.*/\1/p' "$T/off.top" | cut -d. -f1)
[ -n "$ms" ] && [ "$ms" -ge 2000 ] && [ "$ms" -le 6000 ] || why="$why; sleep's off-CPU time in a 5 s window: '${ms:-none}' ms"
pprof -top -nodecount=10000 -tagfocus=state=sleeping -focus=nanosleep "$T/off.pb.gz" > "$T/off.sleep" ||
	why="$why; no nanosleep stack in state sleeping"
grep -qi 'nanosleep' "$T/off.sleep" || why="$why; no nanosleep frame: $(head -c 300 "$T/off.sleep")"
reap "$r5"
[ "$REAP_RC" -eq 0 ] || why="$why; record --off-cpu: status $REAP_RC: $(head -c 200 "$T/offcpu.err")"
if [ -z "$why" ]; then pass $name; note "offcpu: sleep off the CPU $ms ms of a 5 s window"; else fail $name "${why#; }"; show "$T/off.top"; fi

# ---- IPv6 loopback.
name=integration/listen_ipv6
if ! grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2> /dev/null; then
	skip $name "no IPv6 loopback (::1) on this machine"
else
	p4=$($CLIENT freeport)
	bg_rec v6 -a -F 49 -q -d 5 --listen "[::1]:$p4" -o "$T/v6.data"
	r4=$BG_PID
	if wait_until 30 sh -c "curl -sf -g --max-time 2 'http://[::1]:$p4/metrics' | grep -q '^bpfsym_samples_total '"; then
		pass $name
	else
		fail $name "no /metrics at [::1]:$p4"
	fi
	reap "$r4"
fi

# ---- unix:PATH with --listen-group: the peer's credentials decide.
name=integration/listen_unix
grp=users
gid=$(getent group "$grp" | cut -d: -f3)
sd=$(mktemp -d /tmp/bpfsym-listen.XXXXXX)
chmod 0711 "$sd"	# nobody may reach the socket; the socket's mode decides the rest
sock=$sd/bpfsym.sock
# as_user GROUPS ARGS...: listen_client.py as nobody, with these supplementary groups (or --clear-groups).
as_user() {
	g=$1
	shift
	if [ "$g" = none ]; then g=--clear-groups; else g=--groups=$g; fi
	setpriv --reuid=65534 --regid=65534 $g "$PY" - "$@" < "$BPFSYM_TOP/tests/integration/listen_client.py"
}
if ! command -v setpriv > /dev/null 2>&1 || [ -z "$gid" ]; then
	skip $name "setpriv or group '$grp' missing"
else
	why=
	bg_rec unix -a -F 49 -q -d 60 --listen "unix:$sock" --listen-group "$grp" -o "$T/unix.data"
	r5=$BG_PID
	wait_until 30 sh -c "curl -sf --max-time 2 --unix-socket '$sock' http://localhost/metrics | grep -q '^bpfsym_recording 1'" ||
		why="$why; root: no /metrics over $sock"
	m=$(stat -c '%a %g %F' "$sock" 2> /dev/null)
	[ "$m" = "660 $gid socket" ] || why="$why; the socket is '$m' (expected '660 $gid socket')"
	st=$(as_user "$gid" unix "$sock" | awk '$1 == "status" { print $2 }')
	[ "$st" = 200 ] || why="$why; a uid in $grp -> $st (expected 200)"
	st=$(as_user none unix "$sock" | awk '$1 == "status" { print $2 }')
	[ "$st" = error-EACCES ] || why="$why; a uid outside $grp -> $st (expected EACCES from the mode)"
	# The mode opened to everyone (a mistake): the credentials still say no.
	chmod 0666 "$sock"
	st=$(as_user none unix "$sock" | awk '$1 == "status" { print $2 }')
	[ "$st" = 403 ] || why="$why; a uid outside $grp, mode 0666 -> $st (expected 403)"
	chmod 0660 "$sock"
	# Per uid: root holds 8, its 9th is 503; the member is still served.
	$PY "$BPFSYM_TOP/tests/integration/listen_client.py" unix "$sock" 8 3 > "$T/unixhold.out" 2>&1 &
	holder=$!
	wait_until 10 grep -q status "$T/unixhold.out"
	st=$(as_user "$gid" unix "$sock" | awk '$1 == "status" { print $2 }')
	[ "$st" = 200 ] || why="$why; a uid in $grp while root holds 8 -> $st (expected 200)"
	wait $holder
	st=$(awk '$1 == "status" { print $2 }' "$T/unixhold.out")
	[ "$st" = 503 ] || why="$why; root's 9th connection -> $st (expected 503)"
	kill -INT "$r5"
	reap "$r5"
	[ "$REAP_RC" -eq 0 ] || why="$why; status $REAP_RC on SIGINT"
	[ ! -e "$sock" ] || why="$why; the socket is still there after the recording"
	if [ -z "$why" ]; then pass $name; else fail $name "${why#; }"; show "$T/unix.err"; fi
fi

# ---- unix:PATH over what is there already, and a group on TCP: refused before anything.
name=integration/listen_unix_refuse
why=
echo keep > "$sd/file"
run_to 30 "$BPFSYM" record -a -q -d 5 --listen "unix:$sd/file" -o "$T/ur.data" 2> "$T/ur1.err"
rc=$?
[ $rc -eq 2 ] && [ "$(nlines "$T/ur1.err")" -eq 1 ] && grep -q "'$sd/file' exists and is not a socket" "$T/ur1.err" ||
	why="$why; over a file: status $rc, '$(head -2 "$T/ur1.err")'"
[ "$(cat "$sd/file")" = keep ] || why="$why; the file was touched"
ln -s "$sd/target" "$sd/link"
run_to 30 "$BPFSYM" record -a -q -d 5 --listen "unix:$sd/link" -o "$T/ur.data" 2> "$T/ur2.err"
rc=$?
[ $rc -eq 2 ] && [ "$(nlines "$T/ur2.err")" -eq 1 ] && grep -q "not a socket" "$T/ur2.err" || why="$why; through a symlink: status $rc, '$(head -2 "$T/ur2.err")'"
[ -L "$sd/link" ] && [ ! -e "$sd/target" ] || why="$why; the symlink or its target was touched"
run_to 30 "$BPFSYM" record -a -q -d 5 --listen 127.0.0.1:1 --listen-group "$grp" -o "$T/ur.data" 2> "$T/ur3.err"
rc=$?
[ $rc -eq 2 ] && [ "$(nlines "$T/ur3.err")" -eq 1 ] && grep -q "peer credentials" "$T/ur3.err" || why="$why; --listen-group with TCP: status $rc, '$(head -2 "$T/ur3.err")'"
[ ! -e "$T/ur.data" ] || why="$why; a recording was made"
if [ -z "$why" ]; then pass $name; else fail $name "${why#; }"; fi
rm -rf "$sd"
lib_done
