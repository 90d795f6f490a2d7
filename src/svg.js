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
// The URL's fragment drives it too, and is kept up to date, so a view can
// be shared: #s=REGEX searches, #z=DEPTH,OFFSET zooms to that frame.
// window.wprof = { search(re), zoom(frame), zoomTo(name), reset(), frames }
// is what scripts (and the tests) call.
"use strict";
(function () {
	var svg = document.documentElement;
	var W, PAD, CW, TOTAL;
	var frames = [], zoomed = null, details, matched, resetBtn, input;

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
			if (re.test(o.name)) {
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

	function frameOf(el) {
		var g = el && el.closest ? el.closest("g.f") : null;

		return g ? frames[num(g, "data-i")] : null;
	}

	function fromHash() {
		var h = location.hash.replace(/^#/, ""), z = null;

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
				search(v);
			else if (k === "z")
				z = v.split(",").map(Number);
		});
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
		Array.prototype.forEach.call(document.querySelectorAll("g.f"), function (g, i) {
			g.setAttribute("data-i", i);
			frames.push({
				g: g, name: g.getAttribute("data-n"), x: num(g, "data-x"),
				w: num(g, "data-w"), d: num(g, "data-d"),
				rect: g.querySelector("rect"), text: g.querySelector("text"),
				title: g.querySelector("title"),
			});
		});
		svg.addEventListener("click", function (e) {
			var f = frameOf(e.target);

			if (f)
				zoom(f);
		});
		svg.addEventListener("mouseover", function (e) {
			var f = frameOf(e.target);

			details.textContent = f ? f.title.textContent : "";
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
		fromHash();
		svg.setAttribute("data-ready", "1");
		window.wprof = {
			search: search, zoom: zoom, zoomTo: zoomTo, reset: reset, frames: frames,
		};
	}

	if (document.readyState === "loading")
		document.addEventListener("DOMContentLoaded", init);
	else
		init();
})();
