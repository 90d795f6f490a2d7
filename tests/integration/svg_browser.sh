#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The flame graph in a real browser: headless Chromium (Debian's chromium)
# loads the SVG of a 2 s recording of `mixed` (8 threads: burn, nap, mix,
# pipes, fsync, idle) as a document of its own, in an <object> of a small
# HTML page whose script drives the SVG's script the way a user would (its
# search box, a click on a frame) and through window.wprof, and prints what
# it measured; --dump-dom hands that back. Checked:
# - it renders: the script ran, the root frame spans the width, there are
#   frames, labels are 11 px or more and each fits its frame as laid out
#   (getComputedTextLength), and a screenshot is not blank;
# - search: "burn_loop" is highlighted, and the share it reports is the
#   share of the folded lines with a burn_loop frame (of the same
#   recording), within what frames under 0.1 px (not drawn) can take;
#   typing in the search box searches too;
# - zoom: a click on burn_loop makes it as wide as the graph, hides what is
#   not under or over it, and the reset brings the old width back;
# - idle threads: the idle thread and the main thread (in sigsuspend all
#   along) are marked idle, and counted in the legend; burn and mix are not.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mixed
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip "no chromium (Debian package chromium; scripts/install-deps.sh installs it)"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"

start_bg "$TMP/mixed.log" "$WORKLOADS/mixed" -f "$(disk_path sync.dat)"
pid=$BG_PID
wait_line "$TMP/mixed.log" '^ready$' 10 || fatal "mixed did not start"
run_wprof rec record -p "$pid" -d 2 -o "$TMP/m.svg" -o "$TMP/m.folded"
check_wprof_ok rec
[ -s "$TMP/m.svg" ] && [ -s "$TMP/m.folded" ] || fatal "no m.svg or m.folded written"

cat >"$TMP/drive.html" <<'EOF'
<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<object id="graph" type="image/svg+xml" data="m.svg" width="1200" height="900"></object>
<pre id="out">not loaded</pre>
<script>
"use strict";
document.getElementById("graph").addEventListener("load", function () {
	var out = document.getElementById("out"), res = {};
	try {
		var d = this.contentDocument, w = d.defaultView, api = w.wprof, svg = d.documentElement;
		res.ready = svg.getAttribute("data-ready");
		res.frames = api.frames.length;
		var root = api.frames.filter(function (f) { return f.d === 0; })[0];
		res.rootWidth = root.rect.getBBox().width;
		res.labelled = 0; res.overflow = []; res.fontPx = 99;
		api.frames.forEach(function (f) {
			if (!f.text.textContent)
				return;
			res.labelled++;
			res.fontPx = Math.min(res.fontPx, parseFloat(w.getComputedStyle(f.text).fontSize));
			var len = f.text.getComputedTextLength(), room = f.rect.getBBox().width - 3;
			if (len <= 0 || len > room + 0.5)
				res.overflow.push(f.name + ": " + len + " px in " + room);
		});
		var s = api.search("^burn_loop$");
		res.share = s.share;
		res.highlighted = d.querySelectorAll("g.f.m").length;
		res.highlightFill = w.getComputedStyle(d.querySelector("g.f.m rect")).fill;
		res.matchedText = d.getElementById("matched").textContent;
		var target = api.frames.filter(function (f) { return f.name === "burn_loop"; })
			.sort(function (a, b) { return b.w - a.w; })[0];
		res.widthBefore = target.rect.getBBox().width;
		target.rect.dispatchEvent(new w.MouseEvent("click", { bubbles: true }));
		res.widthZoomed = target.rect.getBBox().width;
		res.zoomedName = svg.getAttribute("data-zoomed");
		res.hidden = d.querySelectorAll("g.f.hide").length;
		res.resetShown = !d.getElementById("reset").classList.contains("hide");
		api.reset();
		res.widthReset = target.rect.getBBox().width;
		var input = d.getElementById("search");
		input.value = "nap_loop";
		input.dispatchEvent(new w.Event("input"));
		res.typedShare = Number(svg.getAttribute("data-matched"));
		var idle = d.querySelector("[data-idle-threads]");
		res.idleThreads = idle ? Number(idle.getAttribute("data-idle-threads")) : 0;
		res.idleFrames = Array.prototype.map.call(d.querySelectorAll("g.f title"),
			function (t) { return t.textContent; })
			.filter(function (t) { return / \[idle thread\]$/.test(t); })
			.map(function (t) { return t.replace(/ \(.*/, ""); });
	} catch (e) {
		res.error = String(e && e.stack || e);
	}
	out.textContent = JSON.stringify(res);
});
</script>
</body></html>
EOF

chrome()
{
	timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/chrome" --allow-file-access-from-files \
		--virtual-time-budget=10000 "$@" 2>>"$TMP/chrome.err"
}
log "chromium: the page (at $(date +%T))"
chrome --dump-dom "file://$TMP/drive.html" >"$TMP/dom.html"
log "chromium done at $(date +%T)"
json=$(sed -n 's/.*<pre id="out">\(.*\)<\/pre>.*/\1/p' "$TMP/dom.html" |
	"$PYTHON" -c 'import html, sys; print(html.unescape(sys.stdin.read()))')
log "the page measured: $json"
[ -n "$json" ] && [ "$json" != "not loaded" ] ||
	fatal "chromium did not run the page (exit or output: $(tail -3 "$TMP/chrome.err"))"

# What the page measured, in M[key] (a list: its items one a line); one
# python run, not one a value: python can take seconds to start on a busy
# machine.
declare -A M
while IFS=$'\t' read -r k v; do
	M[$k]=${v//$'\x1f'/$'\n'}
done < <("$PYTHON" -c '
import json, sys
for k, v in json.loads(sys.argv[1]).items():
	v = "\x1f".join(map(str, v)) if isinstance(v, list) else str(v)
	print("%s\t%s" % (k, v.replace("\t", " ").replace("\n", " ")))' "$json")
get()
{
	printf '%s\n' "${M[$1]-None}"
}
err=$(get error)
check "the page's script ran without an error (${err})" test "$err" = None
check "the SVG's script ran (data-ready $(get ready))" test "$(get ready)" = 1
check_near "the root frame spans the graph (px)" "$(get rootWidth)" 1180 0.5
check_ge "frames drawn" "$(get frames)" 30
check_ge "labelled frames" "$(get labelled)" 10
check_ge "the smallest label's font size (px)" "$(get fontPx)" 11
over=$(get overflow)
check "every label fits its frame as the browser lays it out (${over:-all fit})" test -z "$over"

# the share of burn_loop as the folded lines of the same recording give it
want=$(awk '{
	w = $NF; t += w
	n = split(substr($0, 1, length($0) - length(w) - 1), f, ";")
	for (i = 1; i <= n; i++) if (f[i] == "burn_loop") { b += w; break }
} END { printf "%.6f\n", t ? b / t : 0 }' "$TMP/m.folded")
share=$(get share)
check_ge "search burn_loop: its share" "$share" 0.05
check_near "search burn_loop: share vs the folded lines' (frames under 0.1 px aside)" "$share" \
	"$want" 0.002
check_ge "search highlights frames" "$(get highlighted)" 1
check "highlighted frames are magenta ($(get highlightFill))" \
	test "$(get highlightFill)" = "rgb(230, 0, 230)"
check "the search line says the share ($(get matchedText))" \
	grep -q "^Matched: [0-9.]*% (" <<<"$(get matchedText)"
check_ge "typing nap_loop in the search box finds its share" "$(get typedShare)" 0.001

check_near "a click on burn_loop zooms it to the graph's width (px)" "$(get widthZoomed)" 1180 0.5
check_le "it was narrower before (px)" "$(get widthBefore)" 1179
check "the zoomed frame is named (data-zoomed $(get zoomedName))" test "$(get zoomedName)" = burn_loop
check_ge "frames neither under nor over it are hidden" "$(get hidden)" 5
check "the reset button shows while zoomed" test "$(get resetShown)" = True
check_near "reset: burn_loop's width as before (px)" "$(get widthReset)" "$(get widthBefore)" 0.01

idle=$(get idleFrames | tr '\n' ' ')
check_ge "idle threads counted in the legend" "$(get idleThreads)" 2
check "the idle thread's frames are marked idle ($idle)" grep -qw idle <<<"$idle"
check "the main thread (sigsuspend all along) is marked idle ($idle)" grep -qw mixed <<<"$idle"
# not nap: 10 ms naps take ~1.5 ms of CPU in 2 s here, under the 0.1% that
# makes a thread idle (profile__asleep()); a fast machine makes it one
check "the busy threads are not ($idle)" bash -c "! grep -Eqw 'burn|mix' <<<'$idle'"

# a screenshot of the SVG on its own: not blank, in the colour families
log "chromium: a screenshot (at $(date +%T))"
height=$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$TMP/m.svg")
chrome --screenshot="$TMP/shot.png" --window-size="1200,${height:-900}" "file://$TMP/m.svg" >/dev/null
colours=$("$PYTHON" - "$TMP/shot.png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
	n, kind = struct.unpack(">I4s", data[pos:pos + 8])
	body = data[pos + 8:pos + 8 + n]
	if kind == b"IHDR":
		w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
		bpp = {2: 3, 6: 4}[ctype]
	elif kind == b"IDAT":
		idat += body
	pos += 12 + n
raw, stride, prev, seen = zlib.decompress(idat), w * bpp, None, set()
for y in range(h):
	ft, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
	for i in range(stride if ft else 0):
		a = row[i - bpp] if i >= bpp else 0
		b = prev[i] if prev else 0
		c = prev[i - bpp] if prev and i >= bpp else 0
		p = a + b - c
		pred = [0, a, b, (a + b) // 2,
			a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c][ft]
		row[i] = (row[i] + pred) & 255
	prev = row
	for x in range(0, stride, bpp * 4):
		seen.add(bytes(row[x:x + 3]))
print(len(seen))
EOF
)
log "decoded at $(date +%T)"
check_ge "the screenshot has colours (distinct, sampled)" "${colours:-0}" 20
finish
