#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report --flamegraph OUT.svg` on a real recording of hot.c (hot_a,
# hot_b, hot_c in 50/30/20 proportions on two threads):
#   flame_svg          valid XML (xmllint when installed), the titles of hot_a,
#                      hot_b, hot_c carry the same counts as the folded stacks,
#                      the root every sample;
#   flame_self_contained  no resource outside the file: the one URI is the SVG
#                      namespace, no href, no url(), no @import;
#   flame_script       the inline script parses (node --check) and has zoom and
#                      search;
#   flame_render       headless Chromium renders it: the screenshot has several
#                      colours, and the fill colours of the root, dispatch and
#                      hot_a over at least half the areas of their rectangles;
#   flame_cli          --flamegraph - is the same SVG on stdout; with --folded,
#                      or without a value, exit 2; an unwritable OUT exit 1,
#                      no file, nothing on stdout;
#   flame_interactive  in Chromium, with a test script appended: zooming into
#                      hot_a spreads it over the full width and hides other
#                      frames, unzoom restores every width, a search for
#                      hot_[abc] highlights them and reports their share.
# Chromium (Debian's chromium) and node are optional: without them those
# tests SKIP.
. "$(dirname "$0")/lib.sh"
lib_init integration/flame_svg integration/flame_self_contained integration/flame_script \
	integration/flame_cli integration/flame_render integration/flame_interactive

need_fixture hot hot

# hot runs for SECONDS of wall time and writes the CPU time it had: the
# oracle of how many samples the graph holds (half of 199 per CPU second
# at least).  On a machine so busy that it had less than CPU_NEED ms, it is
# recorded again for twice as long (up to 24 s), never skipped.
CPU_NEED=1500
hot_secs=3
while :; do
	rm -f "$T/hot.cpu"
	run_to $((hot_secs + 60)) "$BPFSYM" record -q -F 199 -o "$T/hot.data" -- "$T/hot" $hot_secs 2 "$T/hot.cpu" 2> "$T/record.err"
	rc=$?
	if ! record_ok integration/flame_svg "$T/hot.data" "$T/record.err" $rc; then
		fail_all "no recording"
	fi
	cpu=$(awk '{ printf "%d", $1 * 1000 }' "$T/hot.cpu" 2>/dev/null)
	note "hot for $hot_secs s on 2 threads: ${cpu:-no} ms of CPU time"
	[ -n "$cpu" ] || fail_all "hot did not write its CPU time to $T/hot.cpu"
	if [ "$cpu" -ge $CPU_NEED ] || [ $hot_secs -ge 24 ]; then
		break
	fi
	hot_secs=$((hot_secs * 2))
done
run_to 60 "$BPFSYM" report "$T/hot.data" --flamegraph "$T/out.svg" > "$T/report.out" 2> "$T/report.err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$T/out.svg" ]; then
	show "$T/report.err"
	fail_all "bpfsym report --flamegraph exited with status $rc"
fi
folded integration/flame_svg "$T/hot.data" "$T/folded" || fail_all "no folded stacks to compare with"
note "out.svg: $(wc -c < "$T/out.svg") bytes, $(grep -c '<g data-o' "$T/out.svg") frames"

# The samples in the titles of every frame named $1, summed (a function has
# one frame per thread's path).
title_sum() {
	awk -v n="$1" '
	{
		s = $0
		while ((i = index(s, "<title>" n " (")) > 0) {
			s = substr(s, i + length(n) + 9)
			split(s, a, " ")
			c += a[1]
		}
	}
	END { print c + 0 }' "$T/out.svg"
}

# ---- flame_svg
name=integration/flame_svg
why=
if [ -s "$T/report.out" ]; then
	why="printed on stdout with --flamegraph: $(head -c 80 "$T/report.out")"
fi
if command -v xmllint >/dev/null 2>&1; then
	if ! xmllint --noout "$T/out.svg" 2> "$T/xmllint.err"; then
		why="${why:+$why; }xmllint rejects it"
		show "$T/xmllint.err"
	fi
else
	note "xmllint not installed: XML validity is checked by the unit test's checker only"
fi
total=$(awk '{ c += $NF } END { print c + 0 }' "$T/folded")
root=$(title_sum all)
note "samples: folded $total, root frame $root; hot's $cpu ms of CPU time give ~$(samples_for "$cpu" 199)"
if [ "$cpu" -lt $CPU_NEED ]; then
	why="${why:+$why; }hot had only $cpu ms of CPU time in $hot_secs s ($CPU_NEED needed; the machine is too busy)"
elif [ "$root" -ne "$total" ] || [ "$total" -lt "$(want_samples "$cpu" 199)" ]; then
	why="${why:+$why; }root frame has $root samples, the folded stacks $total (at least $(want_samples "$cpu" 199) expected)"
fi
for f in hot_a hot_b hot_c; do
	svg=$(title_sum $f)
	fold=$(fn_count "$T/folded" hot $f)
	note "$f: $svg samples in the SVG titles, $fold in the folded stacks ($(pct "$svg" "$total")%)"
	if [ "$svg" -ne "$fold" ]; then
		why="${why:+$why; }$f: $svg samples in the titles, $fold in the folded stacks"
	elif [ $((10 * svg)) -lt "$total" ]; then
		why="${why:+$why; }$f: only $svg of $total samples (the fixture gives it 20% or more)"
	fi
done
if [ "$(title_sum hot_a)" -le "$(title_sum hot_c)" ]; then
	why="${why:+$why; }hot_a ($(title_sum hot_a)) not above hot_c ($(title_sum hot_c)): 50% against 20%"
fi
if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi

# ---- flame_self_contained
name=integration/flame_self_contained
grep -o 'https\{0,1\}://[^"<> ]*' "$T/out.svg" | sort -u > "$T/uris"
if [ "$(cat "$T/uris")" != "http://www.w3.org/2000/svg" ]; then
	fail "$name" "URIs other than the SVG namespace: $(tr '\n' ' ' < "$T/uris")"
elif grep -q -e 'href' -e 'url(' -e '@import' "$T/out.svg"; then
	fail "$name" "a reference: $(grep -o -e '.\{20\}href.\{20\}' -e '.\{20\}url(.\{20\}' -e '@import.\{20\}' "$T/out.svg" | head -1)"
else
	pass "$name"
fi

# ---- flame_script: the last CDATA section is the script.
name=integration/flame_script
awk '/<!\[CDATA\[/ { on = 1; sub(/.*<!\[CDATA\[/, ""); n++; delete l; k = 0 }
     on && /\]\]>/ { sub(/\]\]>.*/, ""); l[++k] = $0; on = 0; next }
     on { l[++k] = $0 }
     END { for (i = 1; i <= k; i++) print l[i] }' "$T/out.svg" > "$T/flame.js"
if ! command -v node >/dev/null 2>&1; then
	skip "$name" "node is not installed"
elif ! node --check "$T/flame.js" 2> "$T/node.err"; then
	fail "$name" "the script does not parse"
	show "$T/node.err"
elif ! grep -q 'function zoom(' "$T/flame.js" || ! grep -q 'function search(' "$T/flame.js" ||
     ! grep -q 'function unzoom(' "$T/flame.js"; then
	fail "$name" "no zoom/unzoom/search function in the script"
else
	pass "$name"
fi

# ---- flame_cli
name=integration/flame_cli
why=
"$BPFSYM" report "$T/hot.data" --flamegraph - > "$T/stdout.svg" 2> "$T/stdout.err"
rc=$?
if [ $rc -ne 0 ] || ! cmp -s "$T/stdout.svg" "$T/out.svg"; then
	why="--flamegraph - (status $rc) differs from the file"
fi
"$BPFSYM" report "$T/hot.data" --flamegraph "$T/x.svg" --folded > "$T/both.out" 2>&1
rc=$?
[ $rc -eq 2 ] || why="${why:+$why; }--flamegraph with --folded: status $rc, not 2"
"$BPFSYM" report "$T/hot.data" --flamegraph > "$T/noval.out" 2>&1
rc=$?
[ $rc -eq 2 ] || why="${why:+$why; }--flamegraph without a value: status $rc, not 2"
"$BPFSYM" report "$T/hot.data" --flamegraph "$T/no-such-dir/x.svg" > "$T/bad.out" 2> "$T/bad.err"
rc=$?
if [ $rc -ne 1 ] || [ -e "$T/no-such-dir" ] || [ -s "$T/bad.out" ] || ! grep -q 'flamegraph' "$T/bad.err"; then
	why="${why:+$why; }unwritable OUT: status $rc (want 1), stderr '$(cat "$T/bad.err")'"
fi
if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi

# ---- Chromium
chrome=
for c in chromium chromium-browser google-chrome; do
	if command -v $c >/dev/null 2>&1; then
		chrome=$c
		break
	fi
done
# chrome_run OUTFILE ARGS...: headless Chromium with a profile of its own.
chrome_run() {
	o=$1
	shift
	run_to 120 $chrome --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
		--no-first-run --disable-extensions --window-size=1200,800 "$@" > "$o" 2> "$o.err"
}

# A control: Chromium must render a trivial SVG before bpfsym's is judged,
# so a browser that cannot start here is a SKIP, not a failure of the graph.
# png_colours (the screenshot's reader) failing to build is a failure.
chrome_why="chromium is not installed (Debian package chromium)"
png_why=
if [ -n "$chrome" ]; then
	chrome_why=
	printf '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="800"><rect width="600" height="400" fill="#123456"/></svg>\n' > "$T/control.svg"
	if ! build_cmd "$T/png.build.log" cc -O2 -o "$T/png_colours" "$BPFSYM_TOP/tests/integration/png_colours.c" -lz; then
		png_why="cannot build tests/integration/png_colours.c: $BUILD_WHY"
		show "$T/png.build.log"
	else
		chrome_run "$T/control.out" --screenshot="$T/control.png" "file://$T/control.svg"
		if ! "$T/png_colours" "$T/control.png" 2>/dev/null | grep -q '^123456 2[0-9][0-9][0-9][0-9][0-9]$'; then
			chrome_why="chromium does not render a plain SVG here (see control.out.err)"
			show "$T/control.out.err"
		fi
	fi
fi

# ---- flame_render
name=integration/flame_render
if [ -n "$png_why" ]; then
	fail "$name" "$png_why"
elif [ -n "$chrome_why" ]; then
	skip "$name" "$chrome_why"
else
	chrome_run "$T/shot.out" --screenshot="$T/shot.png" "file://$T/out.svg"
	if [ ! -s "$T/shot.png" ]; then
		fail "$name" "chromium wrote no screenshot"
		show "$T/shot.out.err"
	elif ! "$T/png_colours" "$T/shot.png" > "$T/colours" 2> "$T/colours.err"; then
		fail "$name" "cannot read the screenshot: $(cat "$T/colours.err")"
	else
		# Pixels of a frame's fill: its width x 15 rows, as far as 800 rows show.
		fill_of() {
			sed -n "s/.*<title>$1 ([0-9]* samples, [0-9.]*%)<\/title><rect [^>]*fill=\"#\([0-9a-f]*\)\".*/\1/p" "$T/out.svg" | head -1
		}
		width_of() {
			sed -n "s/.*<title>$1 ([0-9]* samples, [0-9.]*%)<\/title><rect [^>]*width=\"\([0-9.]*\)\".*/\1/p" "$T/out.svg" |
				awk '{ s += $1 } END { printf "%d", s }'
		}
		why=
		ncol=$(awk 'NR > 1 && $1 != "ffffff" && $2 >= 100 { n++ } END { print n + 0 }' "$T/colours")
		note "screenshot: $(head -1 "$T/colours"), $ncol non-white colours on 100 pixels or more"
		if [ "$ncol" -lt 6 ]; then
			why="only $ncol non-white colours cover 100 pixels or more (blank page?)"
			show "$T/colours"
		fi
		for f in all hot_a dispatch; do
			col=$(fill_of $f)
			px=$(awk -v c="$col" '$1 == c { print $2 }' "$T/colours")
			want=$(( $(width_of $f) * 15 / 2 ))
			note "$f: fill #$col, $((${px:-0})) pixels on screen (frame area $((want * 2)))"
			if [ -z "$col" ]; then
				why="${why:+$why; }no frame $f in the SVG"
			elif [ "${px:-0}" -lt "$want" ]; then
				why="${why:+$why; }$f's colour #$col covers ${px:-0} pixels, under half its rectangle ($((want * 2)))"
			fi
		done
		if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi
	fi
fi

# ---- flame_interactive: the page's own script, driven by one appended to a copy.
name=integration/flame_interactive
if [ -n "$png_why" ]; then
	fail "$name" "$png_why"
elif [ -n "$chrome_why" ]; then
	skip "$name" "$chrome_why"
else
	sed '$d' "$T/out.svg" > "$T/drive.svg"
	cat >> "$T/drive.svg" <<'EOF'
<script type="text/ecmascript"><![CDATA[
(function () {
	var F = window.bpfsymFlame, out = [], fr, before = {}, i, f, hidden = 0, a = null;

	if (!F) {
		document.documentElement.setAttribute("data-result", "no-api");
		return;
	}
	fr = F.frames();
	for (i = 0; i < fr.length; i++)
		before[i] = fr[i].rect.getAttribute("width");
	out.push("zoom=" + F.zoom("hot_a"));
	for (i = 0; i < fr.length; i++) {
		f = fr[i];
		if (f.g.getAttribute("display") === "none")
			hidden++;
		else if (f.name === "hot_a")
			a = f;
	}
	out.push("hidden=" + hidden, "hot_a_width=" + (a ? a.rect.getAttribute("width") : "none"),
		 "hot_a_label=" + (a ? a.text.textContent : "none"));
	F.unzoom();
	for (i = 0, f = 0; i < fr.length; i++)
		f += fr[i].rect.getAttribute("width") !== before[i] || fr[i].g.getAttribute("display") === "none";
	out.push("changed_after_unzoom=" + f);
	out.push("matched=" + F.search("^hot_[abc]$"));
	for (i = 0, f = 0; i < fr.length; i++)
		f += fr[i].rect.getAttribute("fill") === "#e600e6";
	out.push("highlighted=" + f, "line=" + document.getElementById("matched").textContent);
	F.clearSearch();
	for (i = 0, f = 0; i < fr.length; i++)
		f += fr[i].rect.getAttribute("fill") === "#e600e6";
	out.push("highlighted_after_clear=" + f);
	document.documentElement.setAttribute("data-result", out.join(";"));
})();
]]></script>
</svg>
EOF
	chrome_run "$T/dom.html" --dump-dom "file://$T/drive.svg"
	res=$(sed -n 's/.*data-result="\([^"]*\)".*/\1/p' "$T/dom.html" | head -1)
	note "chromium: $res"
	val() { echo "$res" | tr ';' '\n' | sed -n "s/^$1=//p"; }
	hot=$(($(title_sum hot_a) + $(title_sum hot_b) + $(title_sum hot_c)))
	nhot=$(grep -c -e '<title>hot_[abc] (' "$T/out.svg")
	want_line="Matched: $(awk -v a="$hot" -v t="$total" 'BEGIN { printf "%.2f", 100 * a / t }')% ($hot of $total samples)"
	why=
	if [ -z "$res" ]; then
		why="the page reported nothing (script error?)"
		show "$T/dom.html.err"
	else
		[ "$(val zoom)" = true ] || why="zoom(hot_a) found no frame"
		[ "$(val hot_a_width)" = 1180.0 ] || why="${why:+$why; }zoomed hot_a is $(val hot_a_width) px wide, not 1180.0"
		[ "$(val hot_a_label)" = hot_a ] || why="${why:+$why; }zoomed hot_a's label is '$(val hot_a_label)'"
		[ "$(val hidden)" -gt 0 ] 2>/dev/null || why="${why:+$why; }zooming hid no frame"
		[ "$(val changed_after_unzoom)" = 0 ] || why="${why:+$why; }$(val changed_after_unzoom) frames differ after unzoom"
		[ "$(val matched)" = "$hot" ] || why="${why:+$why; }search matched $(val matched) samples, the titles say $hot"
		[ "$(val highlighted)" = "$nhot" ] || why="${why:+$why; }$(val highlighted) frames highlighted, $nhot hot_[abc] frames"
		[ "$(val line)" = "$want_line" ] || why="${why:+$why; }the matched line reads '$(val line)', not '$want_line'"
		[ "$(val highlighted_after_clear)" = 0 ] || why="${why:+$why; }highlights left after clearing"
	fi
	if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi
fi

lib_done
