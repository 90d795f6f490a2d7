// SPDX-License-Identifier: GPL-2.0-only
// The interactive part of wprof's flame graphs, embedded in every SVG that
// src/svg.c writes: click to zoom, search, details of the frame under the
// mouse. The graph is drawn without it (every frame is an SVG element with
// its own <title> tooltip); this only moves and marks what is there.
//
// Each frame is <g class="f" data-n=NAME data-x=OFFSET data-w=WIDTH
// data-d=DEPTH>, OFFSET and WIDTH in the graph's units (us), so zooming
// computes positions from exact integers, never from rounded pixels.
//
// With a time strip (svg.c), a drag on it picks a range of its columns and
// the graph is drawn again for that range alone, from the time of each
// frame by kind and column (<script id="wprof-data">, numbers only): the
// same layout as svg.c's, but what svg.c did not draw (under 0.1 px of the
// whole window) stays in its caller.
//
// The URL's fragment drives it too, and is kept up to date, so a view can
// be shared: #s=REGEX searches, #z=DEPTH,OFFSET zooms to that frame,
// #r=FIRST-LAST draws columns FIRST to LAST of the strip (from 0).
// window.wprof = { search(re), zoom(frame), zoomTo(name), reset(),
// setRange(from, to), range(), frames } is what scripts (and the tests)
// call; a range is [from, to) in columns.
"use strict";
(function () {
	var svg = document.documentElement;
	var W, PAD, CW, TOTAL, TOTAL0;
	var frames = [], zoomed = null, details, matched, resetBtn, input;
	var data = null, range = null, legends = [], sel, rangeText, rangeAll, drag = null;

	function num(el, name) {
		return Number(el.getAttribute(name));
	}

	// The same format as the C side (svg__fmt_us): us, ms or s.
	function fmtUs(us) {
		if (us < 1000)
			return Math.round(us) + " \u00b5s";
		if (us < 1e6)
			return (us / 1e3).toFixed(3) + " ms";
		return (us / 1e6).toFixed(3) + " s";
	}

	function pct(x) {
		return (100 * x).toFixed(2) + "%";
	}

	// As many characters as fit in w pixels, ".." marking a cut; "" when
	// not even three fit (the same rule as label() in svg.c).
	function fit(name, w) {
		var n = Math.floor((w - 6) / CW);

		if (n < 3)
			return "";
		var chars = Array.from(name);
		if (chars.length <= n)
			return name;
		return chars.slice(0, n - 2).join("") + "..";
	}

	function place(f, x, w) {
		f.rect.setAttribute("x", x.toFixed(2));
		f.rect.setAttribute("width", w.toFixed(2));
		f.text.setAttribute("x", (x + 3).toFixed(2));
		f.text.textContent = fit(f.name, w);
	}

	function setHash() {
		var parts = [];

		if (input && input.value)
			parts.push("s=" + encodeURIComponent(input.value));
		if (range)
			parts.push("r=" + range[0] + "-" + (range[1] - 1));
		if (zoomed)
			parts.push("z=" + zoomed.d + "," + zoomed.x);
		try {
			history.replaceState(null, "", parts.length ? "#" + parts.join("&") :
					    location.pathname + location.search);
		} catch (e) {
			// a file opened in a sandbox may refuse: the view still works
		}
	}

	// Show f's subtree across the whole width, its ancestors full width
	// and faded, nothing else.
	function zoom(f) {
		if (!f || f.d === 0)
			return reset();
		var scale = (W - 2 * PAD) / f.w, end = f.x + f.w;
		zoomed = f;
		frames.forEach(function (o) {
			var cls = o.g.classList;

			if (o.d >= f.d && o.x >= f.x && o.x + o.w <= end) {
				cls.remove("hide", "a");
				place(o, PAD + (o.x - f.x) * scale, o.w * scale);
			} else if (o.d < f.d && o.x <= f.x && o.x + o.w >= end) {
				cls.remove("hide");
				cls.add("a");
				place(o, PAD, W - 2 * PAD);
			} else {
				cls.add("hide");
			}
		});
		resetBtn.classList.remove("hide");
		svg.setAttribute("data-zoomed", f.name);
		setHash();
		return f;
	}

	function reset() {
		var scale = (W - 2 * PAD) / TOTAL;

		zoomed = null;
		frames.forEach(function (o) {
			o.g.classList.remove("hide", "a");
			place(o, PAD + o.x * scale, o.w * scale);
		});
		resetBtn.classList.add("hide");
		svg.removeAttribute("data-zoomed");
		setHash();
		return null;
	}

	// The widest frame called name (the first of equal ones).
	function zoomTo(name) {
		var best = null;

		frames.forEach(function (o) {
			if (o.name === name && (!best || o.w > best.w))
				best = o;
		});
		return best ? zoom(best) : null;
	}

	function regex(term) {
		try {
			return new RegExp(term);
		} catch (e) {
			return new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
		}
	}

	// Mark the frames whose name matches; their share of the whole graph
	// counts a frame inside another matching frame (recursion) once: the
	// union of their spans, exact in us.
	function search(term) {
		var spans = [], sum = 0, end = -1, re;

		frames.forEach(function (o) {
			o.g.classList.remove("m");
		});
		if (input && input.value !== term)
			input.value = term || "";
		if (!term) {
			matched.textContent = "";
			svg.removeAttribute("data-matched");
			setHash();
			return { us: 0, share: 0, frames: 0 };
		}
		re = regex(term);
		frames.forEach(function (o) {
			if (o.w > 0 && re.test(o.name)) {
				o.g.classList.add("m");
				spans.push([o.x, o.x + o.w]);
			}
		});
		spans.sort(function (a, b) {
			return a[0] - b[0] || b[1] - a[1];
		});
		spans.forEach(function (s) {
			if (s[0] >= end) {
				sum += s[1] - s[0];
				end = s[1];
			} else if (s[1] > end) {
				sum += s[1] - end;
				end = s[1];
			}
		});
		var share = TOTAL ? sum / TOTAL : 0;
		matched.textContent = "Matched: " + pct(share) + " (" + fmtUs(sum) + ") in " +
			spans.length + " frames";
		svg.setAttribute("data-matched", String(share));
		setHash();
		return { us: sum, share: share, frames: spans.length };
	}

	// The time strip's ranges. A piece of weight w spread over columns
	// [c, c + n) has in [lo, hi) of them floor(w * (hi - c) / n) -
	// floor(w * (lo - c) / n), as svg.c counts it (exact: w * n < 2^53).
	function floorDiv(a, n) {
		var q = Math.floor(a / n);

		while (q * n > a)
			q--;
		while ((q + 1) * n <= a)
			q++;
		return q;
	}

	function partOf(w, c, n, lo, hi) {
		return floorDiv(w * (hi - c), n) - floorDiv(w * (lo - c), n);
	}

	var M64 = (BigInt(1) << BigInt(64)) - BigInt(1);

	// hmap__hash_bytes() of the name's UTF-8 (FNV-1a, mixed), low 32 bits
	function hash(name) {
		var h = BigInt("0xcbf29ce484222325"), p = BigInt("0x100000001b3"), s33 = BigInt(33);

		new TextEncoder().encode(name).forEach(function (b) {
			h = ((h ^ BigInt(b)) * p) & M64;
		});
		h ^= h >> s33;
		h = (h * BigInt("0xff51afd7ed558ccd")) & M64;
		h ^= h >> s33;
		h = (h * BigInt("0xc4ceb9fe1a85ec53")) & M64;
		h ^= h >> s33;
		return Number(h & BigInt(0xffffffff));
	}

	// colour() of svg.c: the family's hue and lightness moved by the name's hash
	function colour(fam, f) {
		if (f.hash === undefined)
			f.hash = hash(f.name);
		var v1 = (f.hash & 0xffff) / 65535, v2 = ((f.hash >>> 16) & 0xffff) / 65535;
		var light = fam[3] + Math.trunc(fam[4] * v2) + (f.waker ? 15 : 0);

		return "hsl(" + (fam[0] + Math.trunc(fam[1] * v1)) + "," + fam[2] + "%," +
			Math.min(light, 92) + "%)";
	}

	// the kinds of time (enum rec_kind), the last one "other"; the idle family after them
	var K, OTHER;

	// Each frame's weight by kind in columns [from, to), callees in their callers.
	function weigh(from, to) {
		var kw = new Float64Array(frames.length * K);

		frames.forEach(function (f, i) {
			for (var j = 0; j < f.pc.length; j += 4) {
				var c = f.pc[j + 1], n = f.pc[j + 2];
				var lo = Math.max(from, c), hi = Math.min(to, c + n);

				if (lo < hi)
					kw[i * K + f.pc[j]] += partOf(f.pc[j + 3], c, n, lo, hi);
			}
		});
		for (var i = frames.length - 1; i > 0; i--)
			for (var k = 0; k < K; k++)
				kw[frames[i].parent * K + k] += kw[i * K + k];
		return kw;
	}

	// put_tooltip() of svg.c, for a range
	function tooltip(f, kw, i, total) {
		var best = OTHER, kinds = 0, t = f.name + " (" + fmtUs(f.w) + ", " +
			pct(total ? f.w / total : 0);

		for (var k = 0; k < K; k++) {
			kinds += kw[i * K + k] > 0;
			if (kw[i * K + k] > kw[i * K + best])
				best = k;
		}
		for (k = 0; kinds > 1 && k < K; k++)
			if (kw[i * K + k])
				t += (k === best ? ":" : ",") + " " + data.labels[k] + " " +
					fmtUs(kw[i * K + k]);
		return { text: t + ")" + f.suffix, kind: best };
	}

	function legendText(l, us, total) {
		l.text.textContent = l.text0.replace(/ [0-9.]+ (\u00b5s|ms|s) \([0-9.]+%\)$/,
			" " + fmtUs(us) + " (" + (total ? 100 * us / total : 0).toFixed(1) + "%)");
	}

	function fmtAt(ns) {
		return String(Number((ns / 1e9).toFixed(3)));
	}

	// Draw the graph of columns [from, to) of the strip; all of them: the
	// whole window again, as svg.c drew it.
	function setRange(from, to) {
		if (!data)
			return null;
		from = Math.max(0, Math.floor(from));
		to = Math.min(data.cols, Math.floor(to));
		if (!(from < to) || (from === 0 && to === data.cols))
			return wholeWindow();
		var kw = weigh(from, to), next = new Float64Array(frames.length), idle = 0;

		range = [from, to];
		frames.forEach(function (f, i) {
			var w = 0;

			for (var k = 0; k < K; k++)
				w += kw[i * K + k];
			f.x = i ? next[f.parent] : 0;
			f.w = w;
			next[i] = f.x;
			if (i)
				next[f.parent] += w;
			f.g.classList.toggle("out", w === 0);
			if (f.idle && !frames[f.parent].idle)
				idle += w;
		});
		TOTAL = frames.length ? frames[0].w : 0;
		frames.forEach(function (f, i) {
			if (!f.w)
				return;
			var t = tooltip(f, kw, i, TOTAL);

			f.title.textContent = t.text;
			if (i)
				f.rect.setAttribute("fill",
						    colour(data.fam[f.idle ? K : t.kind], f));
		});
		legends.forEach(function (l) {
			legendText(l, l.kind < 0 ? idle : kw[l.kind], TOTAL);
		});
		var t0 = from * data.col_ns, t1 = Math.min(to * data.col_ns, data.window_ns);
		var x0 = PAD + (W - 2 * PAD) * t0 / data.window_ns;
		sel.setAttribute("x", x0.toFixed(2));
		var x1 = PAD + (W - 2 * PAD) * t1 / data.window_ns;
		sel.setAttribute("width", (x1 - x0).toFixed(2));
		sel.classList.remove("hide");
		rangeText.textContent = fmtAt(t0) + "-" + fmtAt(t1) + " s of " +
			fmtAt(data.window_ns) + " s";
		rangeAll.classList.remove("hide");
		svg.setAttribute("data-range", from + "-" + to);
		return relayout();
	}

	function wholeWindow() {
		range = null;
		frames.forEach(function (f) {
			f.x = f.x0;
			f.w = f.w0;
			f.title.textContent = f.title0;
			f.rect.setAttribute("fill", f.fill0);
			f.g.classList.remove("out");
		});
		TOTAL = TOTAL0;
		legends.forEach(function (l) {
			l.text.textContent = l.text0;
		});
		if (sel) {
			sel.classList.add("hide");
			rangeText.textContent = "";
			rangeAll.classList.add("hide");
		}
		svg.removeAttribute("data-range");
		return relayout();
	}

	// The zoom and the search again, on the frames' new places.
	function relayout() {
		if (zoomed && zoomed.w > 0)
			zoom(zoomed);
		else
			reset();
		search(input ? input.value : "");
		return range;
	}

	function colAt(e) {
		var pt = svg.createSVGPoint();

		pt.x = e.clientX;
		pt.y = e.clientY;
		var x = pt.matrixTransform(svg.getScreenCTM().inverse()).x;
		var c = Math.floor((x - PAD) / (W - 2 * PAD) * data.window_ns / data.col_ns);
		return Math.max(0, Math.min(data.cols - 1, c));
	}

	function showDrag(a, b) {
		var from = Math.min(a, b), to = Math.max(a, b) + 1;
		var x0 = PAD + (W - 2 * PAD) * from * data.col_ns / data.window_ns;
		var x1 = PAD + (W - 2 * PAD) * Math.min(1, to * data.col_ns / data.window_ns);

		sel.setAttribute("x", x0.toFixed(2));
		sel.setAttribute("width", (x1 - x0).toFixed(2));
		sel.classList.remove("hide");
	}

	// A drag picks the columns it went over; a click a block's, or a column.
	function initStrip() {
		var strip = document.getElementById("strip");
		var el = document.getElementById("wprof-data");

		if (!strip || !el)
			return;
		try {
			data = JSON.parse(el.textContent);
		} catch (e) {
			return;
		}
		K = data.labels.length;
		OTHER = K - 1;
		sel = document.getElementById("sel");
		rangeText = document.getElementById("range");
		rangeAll = document.getElementById("range-all");
		data.p.forEach(function (p) {
			var f = frames[p[0]];

			for (var j = 2; f && j + 2 < p.length; j += 3)
				f.pc.push(p[1], p[j], p[j + 1], p[j + 2]);
		});
		Array.prototype.forEach.call(document.querySelectorAll("g.legend"), function (g) {
			var kind = g.getAttribute("data-kind"), text = g.querySelector("text");

			if (kind !== null || g.hasAttribute("data-idle-us"))
				legends.push({ kind: kind === null ? -1 : data.tags.indexOf(kind),
					       text: text, text0: text.textContent });
		});
		strip.addEventListener("mousedown", function (e) {
			if (!e.target.closest("g.col, g.blk"))
				return;
			e.preventDefault();
			drag = { from: colAt(e), to: colAt(e), x: e.clientX, target: e.target };
			showDrag(drag.from, drag.to);
		});
		svg.addEventListener("mousemove", function (e) {
			if (!drag)
				return;
			drag.to = colAt(e);
			showDrag(drag.from, drag.to);
		});
		svg.addEventListener("mouseup", function (e) {
			if (!drag)
				return;
			var d = drag, blk = d.target.closest ? d.target.closest("g.blk") : null;

			drag = null;
			if (Math.abs(e.clientX - d.x) < 3 && blk) {
				var at = num(blk, "data-at-ns");
				setRange(Math.floor(at / data.col_ns),
					 Math.ceil((at + num(blk, "data-ns")) / data.col_ns));
			} else {
				setRange(Math.min(d.from, d.to), Math.max(d.from, d.to) + 1);
			}
		});
		rangeAll.addEventListener("click", wholeWindow);
	}

	function frameOf(el) {
		var g = el && el.closest ? el.closest("g.f") : null;

		return g ? frames[num(g, "data-i")] : null;
	}

	function fromHash() {
		var h = location.hash.replace(/^#/, ""), z = null, term = null, r = null;

		h.split("&").forEach(function (kv) {
			var i = kv.indexOf("="), k = kv.slice(0, i), v;

			if (i < 0)
				return;
			try {
				v = decodeURIComponent(kv.slice(i + 1));
			} catch (e) {
				return; // a fragment someone typed: ignore what is not URI-encoded
			}
			if (k === "s")
				term = v;
			else if (k === "z")
				z = v.split(",").map(Number);
			else if (k === "r")
				r = v.split("-").map(Number);
		});
		if (r && r.length === 2)
			setRange(r[0], r[1] + 1);
		if (term !== null)
			search(term);
		if (z)
			zoom(frames.filter(function (o) {
				return o.d === z[0] && o.x === z[1];
			})[0]);
	}

	function init() {
		W = num(svg, "data-width");
		PAD = num(svg, "data-pad");
		CW = num(svg, "data-char-width");
		TOTAL = num(svg, "data-total");
		details = document.getElementById("details");
		matched = document.getElementById("matched");
		resetBtn = document.getElementById("reset");
		input = document.getElementById("search");
		TOTAL0 = TOTAL;
		var callers = [];
		Array.prototype.forEach.call(document.querySelectorAll("g.f"), function (g, i) {
			var f = {
				g: g, name: g.getAttribute("data-n"), x: num(g, "data-x"),
				w: num(g, "data-w"), d: num(g, "data-d"),
				rect: g.querySelector("rect"), text: g.querySelector("text"),
				title: g.querySelector("title"), pc: [],
			};

			g.setAttribute("data-i", i);
			f.x0 = f.x;
			f.w0 = f.w;
			f.fill0 = f.rect.getAttribute("fill");
			f.title0 = f.title.textContent;
			// what follows the (time, share): " [idle thread]", " [waker]"
			f.suffix = f.title0.slice(f.title0.lastIndexOf(")") + 1);
			f.idle = f.suffix.indexOf("[idle thread]") >= 0;
			f.waker = f.suffix.indexOf("[waker]") >= 0;
			// in the order svg.c draws them, a frame's caller is the last one above it
			callers.length = f.d;
			f.parent = f.d ? callers[f.d - 1] : -1;
			callers[f.d] = i;
			frames.push(f);
		});
		svg.addEventListener("click", function (e) {
			var f = frameOf(e.target);

			if (f)
				zoom(f);
		});
		svg.addEventListener("mouseover", function (e) {
			var f = frameOf(e.target), g = e.target.closest ?
				e.target.closest("g.col, g.blk") : null;

			details.textContent = f ? f.title.textContent :
				g ? g.querySelector("title").textContent : "";
		});
		resetBtn.addEventListener("click", reset);
		if (input) {
			input.addEventListener("input", function () {
				search(input.value);
			});
			input.addEventListener("keydown", function (e) {
				if (e.key === "Escape")
					search("");
			});
		}
		document.addEventListener("keydown", function (e) {
			if (input && (e.key === "/" || ((e.ctrlKey || e.metaKey) && e.key === "f")) &&
			    document.activeElement !== input) {
				e.preventDefault();
				input.focus();
			}
		});
		initStrip();
		fromHash();
		svg.setAttribute("data-ready", "1");
		window.wprof = {
			search: search, zoom: zoom, zoomTo: zoomTo, reset: reset, frames: frames,
			setRange: setRange, range: function () {
				return range;
			},
		};
	}

	if (document.readyState === "loading")
		document.addEventListener("DOMContentLoaded", init);
	else
		init();
})();
