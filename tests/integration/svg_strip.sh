#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The flame graph's time strip in a real browser (headless Chromium, as
# svg_browser.sh drives it), on a recording of `stalls -n 4`'s staller
# thread in 100 ms slices: it burns CPU, then stalls 200, 411, 622 and
# 332 ms, and logs when each stall began (CLOCK_REALTIME) and how long it
# took.
# The log is the ground truth; the window's start is the JSON report's
# start_unix_ns. Checked:
# - the strip shows the stalls where they were: in each column, the sleep
#   band's time is at least what the log's stalls asleep (their requested
#   length) had in it, at most what their whole length had; each stall has
#   its long block's mark, drawn at its instant and as long as it was;
# - a click on the mark of the 622 ms stall selects its columns and the
#   graph is drawn for them alone: stall_here's off-CPU time there is the
#   stalls' time in those columns by the log; the range is in the URL's
#   fragment, and a fragment with the log's range of that stall (and a
#   search) draws it, with stall_here's time by the log there; every
#   frame keeps its colour (svg.js's colours are svg.c's); a drag selects
#   the columns it went over, and "whole window" draws the whole again.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload stalls
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip "no chromium (Debian package chromium; scripts/install-deps.sh installs it)"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"

# the staller alone: the main thread, asleep in pthread_join, is not in the
# sleep band even on a busy machine, where it does not count as idle
run_wprof rec record --slice 100ms --thread-name staller -o "$TMP/s.svg" -o "$TMP/s.json" -- \
	"$WORKLOADS/stalls" -n 4 -l "$TMP/stalls.log"
check_wprof_ok rec
[ -s "$TMP/s.svg" ] && [ -s "$TMP/s.json" ] || fatal "no s.svg or s.json written"
log "the log: $(tr '\n' ' ' <"$TMP/stalls.log")"
[ "$(grep -c '^stall ' "$TMP/stalls.log")" = 4 ] || fatal "stalls did not log 4 stalls"

# The stalls as the log has them, from the window's start (ns): "worker TID",
# then "OFFSET LENGTH REQUESTED" per stall; and the columns of the 622 ms one.
truth=$("$PYTHON" - "$TMP/stalls.log" "$TMP/s.json" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[2]))
start, col = rep["start_unix_ns"], rep["slice_ns"]
requested = [200, 411, 622, 332]  # stalls.c: stall_ms_of(0..3)
i = 0
for line in open(sys.argv[1]):
	f = line.split()
	if f[0] == "worker":
		print("worker", f[1])
	elif f[0] == "stall":
		print("stall", int(f[1]) - start, f[2], requested[i] * 1000000)
		if requested[i] == 622:
			at, n = int(f[1]) - start, int(f[2])
			print("range", at // col, -(-(at + n) // col) - 1)
		i += 1
EOF
) || fatal "the log or the JSON report does not read"
printf '%s\n' "$truth" >"$TMP/truth.txt"
log "ground truth: $(tr '\n' ' ' <"$TMP/truth.txt")"
worker=$(awk '$1 == "worker" { print $2 }' <<<"$truth")
read -r first last < <(awk '$1 == "range" { print $2, $3 }' <<<"$truth")
at622=$(awk '$1 == "stall" && $4 == 622000000 { print $2 }' <<<"$truth")

cat >"$TMP/drive.html" <<EOF
<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<object id="graph" type="image/svg+xml" data="s.svg" width="1200" height="900"></object>
<object id="shared" type="image/svg+xml" data="s.svg#r=$first-$last&amp;s=%5Estall_here%24"
	width="1200" height="900"></object>
<pre id="out">not loaded</pre>
<script>
"use strict";
var WORKER = "$worker", AT = $at622;
EOF
cat >>"$TMP/drive.html" <<'EOF'
var loaded = 0, res = {};

// The time of frames named stall_here under an off-CPU tag, in the current view.
function stallOff(api) {
	var us = 0;

	api.frames.forEach(function (f) {
		var top = f;

		if (f.name !== "stall_here" || f.g.classList.contains("out"))
			return;
		while (top.d > 1)
			top = api.frames[top.parent];
		if (/^off-cpu/.test(top.name))
			us += f.w;
	});
	return us;
}

function measure(d) {
	var w = d.defaultView, api = w.wprof, svg = d.documentElement;
	var strip = d.getElementById("strip");

	res.ready = svg.getAttribute("data-ready");
	res.cols = Number(strip.getAttribute("data-cols"));
	res.colNs = Number(strip.getAttribute("data-col-ns"));
	res.bands = Array.prototype.map.call(d.querySelectorAll("#strip g.col"), function (g) {
		var b = {};

		Array.prototype.forEach.call(g.querySelectorAll("rect[data-k]"), function (r) {
			b[r.getAttribute("data-k")] = Number(r.getAttribute("data-us"));
		});
		b.x = g.querySelector("rect.bg").getBBox().x;
		return b;
	});
	res.blocks = Array.prototype.map.call(d.querySelectorAll("#strip g.blk"), function (g) {
		var box = g.querySelector("rect").getBBox();

		return { tid: g.getAttribute("data-tid"), at: Number(g.getAttribute("data-at-ns")),
			 ns: Number(g.getAttribute("data-ns")), x: box.x, w: box.width,
			 title: g.querySelector("title").textContent };
	});
	res.wholeStallOff = stallOff(api);
	var before = api.frames.map(function (f) { return f.rect.getBBox().width; });

	// a click on the mark of the 622 ms stall
	var mark = Array.prototype.filter.call(d.querySelectorAll("#strip g.blk"), function (g) {
		return g.getAttribute("data-tid") === WORKER;
	}).sort(function (a, b) {
		return Math.abs(a.getAttribute("data-at-ns") - AT) -
			Math.abs(b.getAttribute("data-at-ns") - AT);
	})[0].querySelector("rect");
	var box = mark.getBoundingClientRect(), x = box.left + box.width / 2, y = box.top + 2;
	mark.dispatchEvent(new w.MouseEvent("mousedown", { bubbles: true, clientX: x, clientY: y }));
	mark.dispatchEvent(new w.MouseEvent("mouseup", { bubbles: true, clientX: x, clientY: y }));
	res.range = api.range();
	res.rangeStallOff = stallOff(api);
	res.rangeTotal = api.frames[0].w;
	res.rootWidth = api.frames[0].rect.getBBox().width;
	res.hash = w.location.hash;
	res.rangeText = d.getElementById("range").textContent;
	res.recoloured = api.frames.filter(function (f) {
		return f.w > 0 && f.rect.getAttribute("fill") !== f.fill0;
	}).map(function (f) { return f.name; });
	res.out = d.querySelectorAll("g.f.out").length;
	var stall = api.frames.filter(function (f) {
		return f.name === "stall_here" && f.w > 0;
	}).sort(function (a, b) { return b.w - a.w; })[0];
	res.stallTitle = stall.title.textContent;
	res.stallPx = stall.rect.getBBox().width;
	res.stallWant = 1180 * stall.w / api.frames[0].w;

	// a drag from column 2 over to column 5
	var cols = d.querySelectorAll("#strip g.col rect.bg");
	var b2 = cols[2].getBoundingClientRect(), b5 = cols[5].getBoundingClientRect();
	cols[2].dispatchEvent(new w.MouseEvent("mousedown", { bubbles: true,
		clientX: b2.left + 1, clientY: b2.top + 5 }));
	svg.dispatchEvent(new w.MouseEvent("mousemove", { bubbles: true,
		clientX: b5.left + 2, clientY: b5.top + 5 }));
	svg.dispatchEvent(new w.MouseEvent("mouseup", { bubbles: true,
		clientX: b5.left + 2, clientY: b5.top + 5 }));
	res.dragRange = api.range();

	d.getElementById("range-all").dispatchEvent(new w.MouseEvent("click", { bubbles: true }));
	res.wholeRange = api.range();
	res.restored = api.frames.filter(function (f, i) {
		return Math.abs(f.rect.getBBox().width - before[i]) < 0.01;
	}).length;
	res.frames = api.frames.length;
}

function shared(d) {
	var api = d.defaultView.wprof;

	res.sharedRange = api.range();
	res.sharedStallOff = stallOff(api);
	res.sharedMatched = Number(d.documentElement.getAttribute("data-matched"));
	res.sharedShare = api.frames.filter(function (f) {
		return f.name === "stall_here" && !f.g.classList.contains("out");
	}).reduce(function (s, f) { return s + f.w; }, 0) / api.frames[0].w;
}

function done(fn, d) {
	try {
		fn(d);
	} catch (e) {
		res.error = String(e && e.stack || e);
	}
	if (++loaded === 2)
		document.getElementById("out").textContent = JSON.stringify(res);
}
document.getElementById("graph").addEventListener("load", function () {
	done(measure, this.contentDocument);
});
document.getElementById("shared").addEventListener("load", function () {
	done(shared, this.contentDocument);
});
</script>
</body></html>
EOF

log "chromium: the page (at $(date +%T))"
timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
	--user-data-dir="$TMP/chrome" --allow-file-access-from-files \
	--virtual-time-budget=10000 --dump-dom "file://$TMP/drive.html" \
	>"$TMP/dom.html" 2>>"$TMP/chrome.err"
log "chromium done at $(date +%T)"
sed -n 's/.*<pre id="out">\(.*\)<\/pre>.*/\1/p' "$TMP/dom.html" |
	"$PYTHON" -c 'import html, sys; print(html.unescape(sys.stdin.read()))' >"$TMP/page.json"
log "the page measured: $(cat "$TMP/page.json")"
grep -q '^{' "$TMP/page.json" ||
	fatal "chromium did not run the page (exit or output: $(tail -3 "$TMP/chrome.err"))"

# Each check as "ok|not ok<TAB>what": python compares the page with the log.
while IFS=$'\t' read -r verdict what; do
	if [ "$verdict" = ok ]; then ok "$what"; else not_ok "$what"; fi
done < <("$PYTHON" - "$TMP/page.json" "$TMP/truth.txt" <<'EOF'
import json, sys
page = json.load(open(sys.argv[1]))
truth = [l.split() for l in open(sys.argv[2])]
stalls = [(int(t[1]), int(t[2]), int(t[3])) for t in truth if t[0] == "stall"]
first, last = [int(x) for t in truth if t[0] == "range" for x in t[1:]]
MS = 1000000

def check(cond, what):
	print("%s\t%s" % ("ok" if cond else "not ok", what))

def overlap(a0, a1, b0, b1):
	return max(0, min(a1, b1) - max(a0, b0))

check(page.get("error") is None, "the page's script ran without an error (%s)" % page.get("error"))
check(page.get("ready") == "1", "the SVG's script ran")
col, cols, bands = page["colNs"], page["cols"], page["bands"]
check(col == 100 * MS and cols == len(bands) and cols >= 30,
      "the strip has a column per 100 ms slice (%d of %d ns)" % (cols, col))
# The strip: sleep where the log says the thread slept, and only there. A
# stall sleeps its requested length at least, within its whole length: what
# it took beyond the request (a wait for a CPU before the sleep, on a busy
# machine) is how far the sleep may be late; 1 ms for the clocks.
bad = []
for c, b in enumerate(bands):
	lo = sum(max(0, overlap(c * col, (c + 1) * col, at, at + req) - (n - req))
		 for at, n, req in stalls)
	hi = sum(overlap(c * col, (c + 1) * col, at, at + n) for at, n, req in stalls)
	sleep = b.get("off-cpu:sleep", 0) * 1000
	if not lo - MS <= sleep <= hi + MS:
		bad.append("column %d: sleep %.1f ms, the log %.1f-%.1f" % (c, sleep / MS, lo / MS, hi / MS))
check(not bad, "each column's sleep is the stalls' time in it by the log (%s)" %
      ("; ".join(bad) or "all %d" % cols))
# column c from 10 + 1180 * c * col / window_ns px: evenly, but for the last, shorter one
xs = [b["x"] for b in bands]
steps = [xs[c + 1] - xs[c] for c in range(cols - 2)]
check(xs[0] == 10 and max(steps) - min(steps) < 0.05,
      "the columns are placed evenly from the graph's left edge (%.2f px each)" % steps[0])
px_per_ns = steps[0] / col
marks = [b for b in page["blocks"] if b["tid"] == [t[1] for t in truth if t[0] == "worker"][0]]
check(len(marks) == 4, "each of the 4 stalls has its long block's mark (%d)" % len(marks))
# a block starts when the thread blocks: later than the log's instant by
# what the stall took beyond its sleep at most (a wait for a CPU before it)
for at, n, req in stalls:
	m = min(marks, key=lambda b: abs(b["at"] - at)) if marks else None
	late = n - req + 2 * MS
	check(m and -2 * MS <= m["at"] - at <= late and abs(m["ns"] - n) <= late and
	      abs(m["x"] - (10 + m["at"] * px_per_ns)) <= 0.6 and
	      abs(m["w"] - m["ns"] * px_per_ns) <= 0.6,
	      "the %d ms stall's mark: at %.3f s, %.1f ms, %.1f px wide (the log: %.3f s, %.1f ms) [%s]"
	      % (req / MS, m["at"] / 1e9 if m else -1, m["ns"] / MS if m else -1,
		 m["w"] if m else -1, at / 1e9, n / MS, m["title"] if m else ""))
# the range of the 622 ms stall: the columns its mark spans
m = min(marks, key=lambda b: abs(b["ns"] - 622 * MS)) if marks else {"at": 0, "ns": 0}
rng = page.get("range") or [0, 0]
check(rng == [m["at"] // col, -(-(m["at"] + m["ns"]) // col)],
      "a click on its mark selects the columns it spans: %s" % rng)
want = sum(overlap(rng[0] * col, rng[1] * col, at, at + n) for at, n, req in stalls) / 1000
got = page["rangeStallOff"]
check(abs(got - want) <= 3000, "stall_here's off-CPU time in the range: %.1f ms (the log: %.1f ms)"
      % (got / 1e3, want / 1e3))
check(page["wholeStallOff"] > got + 100000,
      "less than in the whole window (%.1f ms)" % (page["wholeStallOff"] / 1e3))
span_us = (rng[1] - rng[0]) * col / 1000
# about: on-CPU time is in the slices of its samples (10 ms each, more on a busy machine)
check(abs(page["rangeTotal"] - span_us) <= 0.15 * span_us,
      "the range's graph is about the thread's time there: %.1f ms (%.1f ms)"
      % (page["rangeTotal"] / 1e3, span_us / 1e3))
check(abs(page["rootWidth"] - 1180) < 0.5, "its root spans the graph (%.2f px)" % page["rootWidth"])
check(abs(page["stallPx"] - page["stallWant"]) < 0.5,
      "stall_here as wide as its share of the range (%.2f px, want %.2f)"
      % (page["stallPx"], page["stallWant"]))
check(page["stallTitle"].startswith("stall_here ("), "its tooltip: %s" % page["stallTitle"])
check(page["hash"] == "#r=%d-%d" % (first, last), "the URL's fragment: %s" % page["hash"])
check(not page["recoloured"], "every frame keeps its colour (%s)" % (page["recoloured"] or "all do"))
check(page["rangeText"].startswith("%g-%g s of " % (rng[0] * col / 1e9, rng[1] * col / 1e9)),
      "the range is said: %s" % page["rangeText"])
check(page["dragRange"] == [2, 6], "a drag over columns 2 to 5 selects them: %s" % page["dragRange"])
check(page["wholeRange"] is None and page["restored"] == page["frames"],
      "whole window: the graph as it was (%d of %d frames as wide)" % (page["restored"], page["frames"]))
shared = sum(overlap(first * col, (last + 1) * col, at, at + n) for at, n, req in stalls) / 1000
check(page["sharedRange"] == [first, last + 1] and
      abs(page["sharedStallOff"] - shared) <= 3000,
      "the fragment #r=%d-%d draws that range: %s, stall_here %.1f ms (the log: %.1f ms)"
      % (first, last, page["sharedRange"], page["sharedStallOff"] / 1e3, shared / 1e3))
check(abs(page["sharedMatched"] - page["sharedShare"]) < 0.001,
      "and its search gives stall_here's share of the range: %.4f (%.4f)"
      % (page["sharedMatched"], page["sharedShare"]))
EOF
)
finish
