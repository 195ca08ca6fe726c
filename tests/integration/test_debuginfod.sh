#!/bin/sh
# A stripped binary is named through a real debuginfod server on
# localhost (Debian's debuginfod -F), serving its debug file by build-id;
# without DEBUGINFOD_URLS, or with --no-debuginfod, nothing is fetched; a
# server that accepts and never answers costs names, never samples.
#
#   debuginfod_named      DEBUGINFOD_URLS set: hot_a/hot_b/hot_c named
#                         (oracle: nm of the unstripped build), in the
#                         fixture's 50/30/20 split, the file fetched
#                         into DEBUGINFOD_CACHE_PATH, the header counting as
#                         many build-ids asked as the server had requests
#   debuginfod_flag       --debuginfod=URLS without the variable: the same
#   debuginfod_off        no DEBUGINFOD_URLS: no request reaches the server
#                         (its /metrics count), no hot_ frame named
#   debuginfod_no_flag    DEBUGINFOD_URLS set and --no-debuginfod: likewise
#   debuginfod_hung       a server that accepts and never answers: the
#                         samples match the fixture's CPU clock, and the
#                         recorder ends within 2.5 s of SIGINT
#   debuginfod_report     `report --symfs /` of the recording made without
#                         it: hot_a/b/c named through the server; with
#                         --no-debuginfod not, and the server not asked
#   debuginfod_symbolize  `symbolize --elf` of the stripped binary at
#                         nm's addresses: nm's names
#   debuginfod_wrong      a server answering with the debug file of another
#                         build: fetched, refused (its build-id), nothing
#                         named, counted as missed
. "$(dirname "$0")/lib.sh"
lib_init integration/debuginfod_named integration/debuginfod_flag integration/debuginfod_off \
	integration/debuginfod_no_flag integration/debuginfod_hung integration/debuginfod_report \
	integration/debuginfod_symbolize integration/debuginfod_wrong

command -v debuginfod > /dev/null 2>&1 || skip_all "debuginfod not installed (Debian's debuginfod package)"
for t in objcopy strip nm readelf curl python3; do
	command -v $t > /dev/null 2>&1 || skip_all "no $t"
done
need_fixture hot hot_plain -Wl,--build-id
mkdir -p "$T/srv" "$T/bin"
(
	set -e
	cp "$T/hot_plain" "$T/bin/hot"
	objcopy --only-keep-debug "$T/bin/hot" "$T/srv/hot.debug"
	strip --strip-all "$T/bin/hot"
) > "$T/strip.log" 2>&1 || { show "$T/strip.log"; fail_all "cannot split the debug file: $(tail -1 "$T/strip.log")"; }
# The stripped file has no symbols of its own: any name comes from elsewhere.
if ! nm "$T/bin/hot" 2>&1 | grep -q 'no symbols'; then
	fail_all "strip left a symbol table in the binary: $(nm "$T/bin/hot" 2>&1 | head -1)"
fi
if nm -D "$T/bin/hot" 2>/dev/null | grep -q ' hot_'; then
	fail_all "the binary's dynamic symbols name hot_ functions"
fi
bid=$(readelf -n "$T/bin/hot" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail_all "the fixture has no build-id"
nm "$T/hot_plain" | awk '$3 ~ /^hot_[abc]$/ { print $3 }' | sort > "$T/oracle"
[ "$(wc -l < "$T/oracle")" -eq 3 ] || fail_all "nm finds $(wc -l < "$T/oracle") of hot_a/hot_b/hot_c in the unstripped build"

# A free port: the kernel's choice, released just before debuginfod takes it.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bg_start debuginfod -F -p "$port" -d "$T/db.sqlite" -t 0 -g 0 "$T/srv" > "$T/debuginfod.log" 2>&1
url=http://127.0.0.1:$port
served() {
	curl -sf -o /dev/null "$url/buildid/$bid/debuginfo"
}
if ! wait_until 30 served; then
	show "$T/debuginfod.log"
	fail_all "debuginfod did not serve $bid within 30 s"
fi
# debuginfo requests the server has answered so far.
requests() {
	curl -sf "$url/metrics" | awk -F'[{}" ]' '/^http_requests_total\{type="debuginfo"\}/ { n = $NF } END { print n + 0 }'
}

# rec NAME TAG [ENV...] -- [OPTIONS...]: record bin/hot 4 s into $T/TAG.data
# (4 s of wall time: hot runs by the wall clock, and 1.5 s of its CPU time
# are wanted; 2 s gave 0.93 s in a make test beside a VM and builds)
# with ENV, DEBUGINFOD_CACHE_PATH in $T/TAG.cache; folded in $T/TAG.folded.
rec() {
	r_name=$1 r_tag=$2
	shift 2
	r_env="DEBUGINFOD_CACHE_PATH=$T/$r_tag.cache"
	while [ "$1" != -- ]; do
		r_env="$r_env $1"
		shift
	done
	shift
	rm -f "$T/$r_tag.cpu"
	# shellcheck disable=SC2086
	run_to 120 env -u DEBUGINFOD_URLS $r_env "$BPFSYM" record -q -v -F 199 -o "$T/$r_tag.data" "$@" -- \
		"$T/bin/hot" 4 1 "$T/$r_tag.cpu" 2> "$T/$r_tag.err"
	r_rc=$?
	record_ok "$r_name" "$T/$r_tag.data" "$T/$r_tag.err" $r_rc && folded "$r_name" "$T/$r_tag.data" "$T/$r_tag.folded"
}

# leaves FOLDED: "TOTAL A B C": hot's samples, and those whose leaf is hot_a, hot_b, hot_c.
leaves() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		if (index(s, "hot;") != 1) next
		t += n; k = split(s, f, ";"); l = f[k]
		if (l == "hot_a") a += n; else if (l == "hot_b") b += n; else if (l == "hot_c") c += n }
		END { print t + 0, a + 0, b + 0, c + 0 }' "$1"
}

# near GOT TOTAL PCT: true when GOT of TOTAL is within 10 points of PCT %.
near() {
	[ $((100 * $1 - ($3 + 10) * $2)) -le 0 ] && [ $((100 * $1 - ($3 - 10) * $2)) -ge 0 ]
}

# named NAME TAG: true when hot's leaves are hot_a/b/c, about 50/30/20
# (the fixture's split), and the samples match the fixture's CPU time;
# else FAIL NAME.
named() {
	cpu=$(awk '{ printf "%d\n", $1 * 1000 }' "$T/$2.cpu" 2>/dev/null)
	cpu=${cpu:-0}
	set -- "$1" "$2" $(leaves "$T/$2.folded")
	note "$1: $3 samples of hot, leaves hot_a $4, hot_b $5, hot_c $6; $cpu ms of CPU (~$(samples_for "$cpu" 199) samples)"
	cpu_enough "$1" hot "$cpu" 1500 && samples_ok "$1" hot "$3" "$cpu" 199 || return 1
	if [ $(($4 + $5 + $6)) -lt $(($3 * 90 / 100)) ]; then
		fail "$1" "only $(($4 + $5 + $6)) of $3 samples have a hot_[abc] leaf"
		sort -t' ' -k2 -n "$T/$2.folded" | tail -5 | show
		return 1
	fi
	if ! near "$4" "$3" 50 || ! near "$5" "$3" 30 || ! near "$6" "$3" 20; then
		fail "$1" "split $4/$5/$6 of $3 is not about 50/30/20"
		return 1
	fi
	return 0
}

# 1. DEBUGINFOD_URLS: named, fetched into the cache, counted in the header.
before=$(requests)
if rec integration/debuginfod_named on "DEBUGINFOD_URLS=$url" --; then
	after=$(requests)
	run_to 60 "$BPFSYM" report "$T/on.data" > "$T/on.table" 2>&1
	hdr=$(grep '^# debuginfod:' "$T/on.table")
	note "debuginfod_named: server requests $before -> $after; header: $hdr"
	if ! named integration/debuginfod_named on; then
		:
	elif [ ! -s "$T/on.cache/$bid/debuginfo" ]; then
		fail integration/debuginfod_named "no debug file in DEBUGINFOD_CACHE_PATH ($T/on.cache/$bid/debuginfo)"
	elif [ "$after" -le "$before" ]; then
		fail integration/debuginfod_named "the server counted no request ($before -> $after)"
	elif ! echo "$hdr" | grep -Eq "^# debuginfod: $((after - before)) build-ids asked: [1-9][0-9]* found"; then
		# Each build-id asked once (hot's, and libc's where libc6-dbg is missing), hot's found.
		fail integration/debuginfod_named "the header says '$hdr' for $((after - before)) requests to the server"
	else
		pass integration/debuginfod_named
	fi
fi

# 2. --debuginfod=URLS alone.
if rec integration/debuginfod_flag flag -- "--debuginfod=$url"; then
	named integration/debuginfod_flag flag && pass integration/debuginfod_flag
fi

# 3. and 4. Nothing asked: the server's count stays, no hot_ name.
unasked() {
	u_before=$(requests)
	rec "$1" "$2" "$3" -- $4 || return
	u_after=$(requests)
	set -- "$1" "$2" $(leaves "$T/$2.folded")
	note "$1: server requests $u_before -> $u_after; $3 samples of hot, $(($4 + $5 + $6)) named hot_[abc]"
	if [ "$u_after" != "$u_before" ]; then
		fail "$1" "the server was asked ($u_before -> $u_after requests)"
	elif [ -e "$T/$2.cache/$bid" ]; then
		fail "$1" "a debug file was fetched into $T/$2.cache"
	elif [ "$3" -lt 100 ]; then
		fail "$1" "only $3 samples of hot"
	elif [ $(($4 + $5 + $6)) -ne 0 ] || grep -Eq '^(bpfsym: )?debuginfod:' "$T/$2.err"; then
		fail "$1" "hot_ frames named or debuginfod used without it being asked for"
		grep -E '^(bpfsym: )?debuginfod:' "$T/$2.err" | show
	else
		pass "$1"
	fi
}
unasked integration/debuginfod_off off "LANG=C" ""
unasked integration/debuginfod_no_flag noflag "DEBUGINFOD_URLS=$url" --no-debuginfod

# 5. report --symfs / names the recording made without it; --no-debuginfod does not.
if [ -s "$T/off.data" ]; then
	rb=$(requests)
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/rep.cache run_to 60 "$BPFSYM" report "$T/off.data" \
		--symfs / --no-debuginfod --folded > "$T/rep_no.folded" 2> "$T/rep_no.err"
	ra=$(requests)
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/rep.cache run_to 60 "$BPFSYM" report "$T/off.data" \
		--symfs / --folded > "$T/rep.folded" 2> "$T/rep.err"
	rc=$?
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/rep.cache run_to 60 "$BPFSYM" report "$T/off.data" \
		--symfs / > "$T/rep.table" 2>&1
	set -- $(leaves "$T/rep.folded") $(leaves "$T/rep_no.folded")
	note "debuginfod_report: server requests $rb -> $ra with --no-debuginfod; leaves hot_a/b/c $2/$3/$4 of $1 (--no-debuginfod: $(($6 + $7 + $8)) of $5); $(grep '^# user symbols' "$T/rep.table")"
	if [ $rc -ne 0 ]; then
		fail integration/debuginfod_report "bpfsym report --symfs / exited with status $rc"
		show "$T/rep.err"
	elif [ "$ra" != "$rb" ] || [ $(($6 + $7 + $8)) -ne 0 ]; then
		fail integration/debuginfod_report "--no-debuginfod asked the server or named hot_ frames"
	elif [ "$1" -lt 100 ] || [ $(($2 + $3 + $4)) -lt $(($1 * 90 / 100)) ]; then
		fail integration/debuginfod_report "only $(($2 + $3 + $4)) of $1 samples named hot_[abc] through --symfs / and debuginfod"
	elif ! grep -Eq '^# user symbols:.*debuginfod: [1-9][0-9]* of [0-9]+ build-ids found' "$T/rep.table"; then
		fail integration/debuginfod_report "the header does not count the fetch: $(grep '^# user symbols' "$T/rep.table")"
	else
		pass integration/debuginfod_report
	fi
else
	fail integration/debuginfod_report "no recording without debuginfod to report on"
fi

# 6. symbolize --elf: nm's addresses get nm's names.
nm "$T/hot_plain" | awk '$3 ~ /^hot_[abc]$/ { print $1, $3 }' | sort > "$T/nm.addrs"
awk '{ print $1 }' "$T/nm.addrs" | DEBUGINFOD_CACHE_PATH=$T/sym.cache run_to 60 "$BPFSYM" symbolize \
	--debuginfod="$url" --elf "$T/bin/hot" > "$T/sym.out" 2> "$T/sym.err"
rc=$?
awk '{ sub(/\+0x0$/, "", $2); print $2 }' "$T/sym.out" > "$T/sym.names"
if [ $rc -ne 0 ]; then
	fail integration/debuginfod_symbolize "bpfsym symbolize exited with status $rc"
	show "$T/sym.err"
elif [ "$(awk '{ print $2 }' "$T/nm.addrs" | tr '\n' ' ')" != "$(tr '\n' ' ' < "$T/sym.names")" ]; then
	fail integration/debuginfod_symbolize "symbolize says $(tr '\n' ' ' < "$T/sym.names"), nm $(awk '{ print $2 }' "$T/nm.addrs" | tr '\n' ' ')"
else
	pass integration/debuginfod_symbolize
fi

# 7. A server that serves another build's debug file for any build-id.
need_fixture hot hot_other -Wl,--build-id -O1
objcopy --only-keep-debug "$T/hot_other" "$T/other.debug" || fail_all "objcopy failed on hot_other"
cat > "$T/liar.py" << 'EOF'
import http.server, os, sys
data = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[3], "a") as f:
            f.write(self.path + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
EOF
bg_start /usr/bin/python3 "$T/liar.py" "$T/liar.port" "$T/other.debug" "$T/liar.log"
if ! wait_until 10 exists "$T/liar.port"; then
	fail integration/debuginfod_wrong "the lying server did not start"
elif rec integration/debuginfod_wrong wrong "DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$T/liar.port")" --; then
	run_to 60 "$BPFSYM" report "$T/wrong.data" > "$T/wrong.table" 2>&1
	set -- $(leaves "$T/wrong.folded")
	note "debuginfod_wrong: asked $(grep -c "/buildid/$bid/debuginfo" "$T/liar.log" 2>/dev/null) times for $bid; $(($2 + $3 + $4)) of $1 leaves named hot_[abc]; $(grep '^# debuginfod:' "$T/wrong.table")"
	if ! grep -q "/buildid/$bid/debuginfo" "$T/liar.log" 2>/dev/null; then
		fail integration/debuginfod_wrong "the server was not asked for $bid"
	elif [ $(($2 + $3 + $4)) -ne 0 ]; then
		fail integration/debuginfod_wrong "another build's debug file named $(($2 + $3 + $4)) samples"
	elif ! grep -q "not used: another build-id" "$T/wrong.err"; then
		fail integration/debuginfod_wrong "no 'another build-id' refusal in -v"
		grep -E '^(bpfsym: )?debuginfod:' "$T/wrong.err" | show
	elif n=$(wc -l < "$T/liar.log") &&
	     ! grep -q "^# debuginfod: $n build-ids asked: 0 found, $n missed, 0 timed out" "$T/wrong.table"; then
		fail integration/debuginfod_wrong "the header says: $(grep '^# debuginfod:' "$T/wrong.table")"
	else
		pass integration/debuginfod_wrong
	fi
fi

# 8. A server that accepts and never answers.
cat > "$T/hang.py" << 'EOF'
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], "a") as f:
        f.write("accepted\n")
EOF
bg_start /usr/bin/python3 "$T/hang.py" "$T/hang.port" "$T/hang.log"
if ! wait_until 10 exists "$T/hang.port"; then
	fail integration/debuginfod_hung "the hanging server did not start"
else
	hurl=http://127.0.0.1:$(cat "$T/hang.port")
	# The fixture would run 6 s; SIGINT after 2 s of it, while the fetch hangs.
	bg_start env DEBUGINFOD_URLS="$hurl" DEBUGINFOD_CACHE_PATH="$T/hung.cache" \
		"$BPFSYM" record -q -v -F 199 -o "$T/hung.data" -- "$T/bin/hot" 6 2> "$T/hung.err"
	rpid=$BG_PID
	wait_until 30 pgrep -P "$rpid" -x hot > /dev/null
	hpid=$(pgrep -P "$rpid" -x hot)
	sleep 2
	cpu=$(cpu_ms $hpid)
	t0=$(date +%s%N)
	kill -INT "$rpid"
	if [ -z "$hpid" ]; then
		fail integration/debuginfod_hung "the fixture did not start under the recorder"
		show "$T/hung.err"
	elif ! wait_exit "$rpid" 10; then
		fail integration/debuginfod_hung "the recorder did not end within 10 s of SIGINT"
	else
		wait "$rpid"
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		run_to 60 "$BPFSYM" report "$T/hung.data" > "$T/hung.table" 2>&1
		set -- $(grep -v '^#' "$T/hung.table" > /dev/null; run_to 60 "$BPFSYM" report "$T/hung.data" --folded | leaves /dev/stdin)
		note "debuginfod_hung: exit $rc $ms ms after SIGINT; $(grep -c accepted "$T/hang.log" 2>/dev/null) connections accepted; $1 samples of hot for its $cpu ms of CPU (~$(samples_for "$cpu" 199)); header: $(grep '^# debuginfod:' "$T/hung.table")"
		if [ "$rc" -ne 0 ]; then
			fail integration/debuginfod_hung "bpfsym record exited with status $rc"
			show "$T/hung.err"
		elif [ "$ms" -gt 2500 ]; then
			fail integration/debuginfod_hung "the recorder took $ms ms to end after SIGINT"
		elif ! grep -q accepted "$T/hang.log" 2>/dev/null; then
			fail integration/debuginfod_hung "bpfsym never asked the hanging server"
		elif cpu_enough integration/debuginfod_hung hot "$cpu" 1000 &&
		     samples_ok integration/debuginfod_hung hot "$1" "$cpu" 199; then
			pass integration/debuginfod_hung
		fi
	fi
fi
