#!/bin/sh
# Rotation under CPU load (issue 25): RUNS recordings of SECONDS each,
# `bpfsym record -a --switch-output=1s --switch-max-files=3`, with two busy
# loops beside them, each ended by SIGINT.  A run passes when:
#   - the recorder exits 0 after SIGINT and says nothing on stderr but its
#     summary line;
#   - exactly 3 rotated files OUTPUT.<17 digits> remain and no OUTPUT;
#   - each file reads on its own as a complete recording (an END record,
#     no truncation) with its "# samples:" equal to its --folded count (a
#     last file may hold none: a SIGINT that lands within a few ms of a
#     switch ends a file of those ms; said on the run's line, not a failure);
#   - their merge (`bpfsym report F1 F2 F3`) holds the sum of the three,
#     and that sum is what the summary line says the kept files hold.
# Prints one line per run and "passed P of RUNS"; exit 0 when all passed.
#
#   sudo bench/rotate_race.sh                 # 50 runs of 20 s: about 20 min
#   RUNS=5 SECONDS_EACH=8 sudo bench/rotate_race.sh
#   BPFSYM=/path/to/bpfsym KEEP=dir ...       # another binary; keep failed runs' files in dir
set -u

RUNS=${RUNS:-50}
SECONDS_EACH=${SECONDS_EACH:-20}
TOP=$(cd "$(dirname "$0")/.." && pwd)
BPFSYM=${BPFSYM:-$TOP/bpfsym}
KEEP=${KEEP:-}

[ "$(id -u)" -eq 0 ] || { echo "rotate_race: run as root (it loads BPF)" >&2; exit 2; }
[ -x "$BPFSYM" ] || make -C "$TOP" -s bpfsym || exit 2
W=$(mktemp -d /tmp/bpfsym-race.XXXXXX) || exit 2
SPIN=
cleanup() {
	for p in $SPIN; do kill "$p" 2> /dev/null; done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two busy loops, as the issue's load: both CPUs of a 2-CPU machine.
for i in 1 2; do
	sh -c 'while :; do :; done' &
	SPIN="$SPIN $!"
done

# check DIR: why the run in DIR failed, or nothing.
check() {
	d=$1
	[ "$(cat "$d/rc")" -eq 0 ] || { echo "exit status $(cat "$d/rc"): $(grep -v '^bpfsym: [0-9]* samples' "$d/err" | head -2 | tr '\n' ' ')"; return; }
	extra=$(grep -cv '^bpfsym: [0-9]* samples' "$d/err")
	[ "$extra" -eq 0 ] || { echo "stderr: $(grep -v '^bpfsym: [0-9]* samples' "$d/err" | head -2 | tr '\n' ' ')"; return; }
	[ ! -e "$d/r.data" ] || { echo "r.data left unrenamed"; return; }
	files=$(ls "$d" | grep -E '^r\.data\.[0-9]{17}$' | sort)
	n=$(echo "$files" | grep -c .)
	[ "$n" -eq 3 ] || { echo "$n rotated files, expected 3: $(ls "$d" | tr '\n' ' ')"; return; }
	[ "$(ls "$d" | grep -c '^r\.data')" -eq 3 ] || { echo "other files: $(ls "$d" | tr '\n' ' ')"; return; }
	sum=0
	for f in $files; do
		"$BPFSYM" report "$d/$f" --limit 1 > "$d/$f.rep" 2> "$d/$f.err" ||
			{ echo "'$f' does not read: $(head -1 "$d/$f.err")"; return; }
		if grep -qi truncat "$d/$f.rep" "$d/$f.err" || ! grep -q '^# lost: [0-9]' "$d/$f.rep"; then
			echo "'$f' is not complete: $(head -1 "$d/$f.err")"
			return
		fi
		s=$(awk '/^# samples: / { print $3 + 0 }' "$d/$f.rep")
		c=$("$BPFSYM" report "$d/$f" --folded 2> /dev/null | awk '{ c += $NF } END { print c + 0 }')
		[ "${s:-x}" = "$c" ] || { echo "'$f' says ${s:-no} samples, its folded stacks hold $c"; return; }
		[ "$c" -gt 0 ] || echo "$f $(awk '/^# started: .* duration: / { print $(NF-1) }' "$d/$f.rep")" > "$d/empty"
		sum=$((sum + c))
	done
	# shellcheck disable=SC2046 # file names without spaces
	m=$("$BPFSYM" report $(for f in $files; do echo "$d/$f"; done) --folded 2> "$d/merge.err" |
		awk '{ c += $NF } END { print c + 0 }')
	[ "$m" -eq "$sum" ] || { echo "the merge holds $m samples, the files $sum"; return; }
	kept=$(sed -n 's/^bpfsym: .* \([0-9][0-9]*\) samples in the [0-9]* kept.*/\1/p' "$d/err")
	[ "${kept:-x}" = "$sum" ] || { echo "the summary says ${kept:-nothing about} samples in the kept files, they hold $sum"; return; }
}

pass=0
i=1
while [ $i -le "$RUNS" ]; do
	d=$W/run$i
	mkdir "$d"
	"$BPFSYM" record -a -q --switch-output=1s --switch-max-files=3 -o "$d/r.data" 2> "$d/err" &
	rec=$!
	sleep "$SECONDS_EACH"
	kill -INT $rec
	# Ended within 60 s of SIGINT, or said to be stuck (and where: a file
	# system that never answers holds a recorder in the kernel, issue 25 item 4).
	n=600
	while [ $n -gt 0 ] && [ "$(sed -n 's/^.*) \(.\).*/\1/p' /proc/$rec/stat 2> /dev/null)" != Z ] &&
		[ -e /proc/$rec ]; do
		sleep 0.1
		n=$((n - 1))
	done
	if [ $n -eq 0 ]; then
		why="did not end within 60 s of SIGINT (waiting in $(cat /proc/$rec/wchan 2> /dev/null))"
		kill -KILL $rec 2> /dev/null
	else
		wait $rec
		echo $? > "$d/rc"
		why=$(check "$d")
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		note=$(sed -n 's/^bpfsym: \([0-9]*\) samples.* written to \([0-9]*\) files.* \([0-9]*\) samples in the 3 kept.*/\1 samples, \2 files, \3 in the 3 kept/p' "$d/err")
		[ -s "$d/empty" ] && note="$note; no sample in $(cut -d' ' -f1 "$d/empty"), $(cut -d' ' -f2 "$d/empty") s long"
		echo "run $i: $(date +%T) ok ($note)"
		rm -rf "$d"
	else
		echo "run $i: $(date +%T) FAIL: $why"
		[ -n "$KEEP" ] && mkdir -p "$KEEP" && cp -a "$d" "$KEEP/"
		rm -rf "$d"
	fi
	i=$((i + 1))
done
echo "passed $pass of $RUNS"
[ "$pass" -eq "$RUNS" ]
