#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Thread names and command lines are whatever the process's user makes
# them. Nobody's process (tests/workloads/hostnames) names its threads with
# terminal escapes (a title, a cleared screen), a newline and a summary line,
# raw C1 bytes, DEL and CR, C1 encoded as UTF-8, overlong forms, a surrogate,
# 0xf5 and 0xff, a character cut short, and one valid name of two-, three-
# and four-byte characters; its arguments hold the same kinds. Root's wprof
# records it into every format at once (folded, -f threads, json, svg,
# pprof, a saved recording) with the summary on stderr, and `wprof report`
# of the saved recording writes the summary, json and threads again. Then:
# - every output, stderr too, is valid UTF-8 with no control character
#   (C0 but the newline, DEL, C1): nothing a terminal would act on;
# - stderr holds only wprof's lines: each starts with `wprof: `, and none
#   is the thread's forged one;
# - -f threads: one row of 14 columns per process and thread;
# - json: strict UTF-8 and strict JSON; svg: well-formed XML; pprof: every
#   string of its table strict UTF-8 free of controls, and go tool pprof
#   reads it; folded: every line parses, tag first and comm second;
# - each thread name (read from /proc/PID/task/*/comm) and the command line
#   are there, escaped by the rule (each byte of a control character or of
#   what is not UTF-8 as \xNN), computed here independently with python's
#   strict UTF-8 decoder: as is in the summary and json, ';' as ':' in the
#   stacks' frames, spaces as '_' in the table; the valid name unchanged.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload hostnames
command -v "$PYTHON" >/dev/null || fatal "no $PYTHON to check the outputs"
command -v go >/dev/null || skip "no go tool (Debian package golang-go) to read pprof files"
export HOME=${HOME:-$TMP} GOCACHE=$TMP/gocache

# argv[0] too is the user's choice (exec -a)
# shellcheck disable=SC2016 # the inner shell expands them
start_bg "$TMP/hn.log" setpriv --reuid=65534 --regid=65534 --clear-groups \
	bash -c 'exec -a "$0" "$@"' $'\e]2;argv\a' "$WORKLOADS/hostnames" $'\xc2\x9b2J' \
	$'line\nwprof: forged argv' $'\x9b31m\xf5\xff' $'caf\xc3\xa9'
PID=$BG_PID
wait_line "$TMP/hn.log" '^ready [0-9]+$' 10 || fatal "hostnames did not start"

# the truth: the names and the command line as the kernel holds them
"$PYTHON" - "$PID" "$TMP/names.json" <<'EOF' || fatal "cannot read the names of $PID"
import glob, json, sys
pid = sys.argv[1]
names = []
for p in sorted(glob.glob("/proc/%s/task/*/comm" % pid)):
	with open(p, "rb") as f:
		b = f.read()
	names.append(b[:-1].hex() if b.endswith(b"\n") else b.hex())
with open("/proc/%s/cmdline" % pid, "rb") as f:
	cmd = f.read().rstrip(b"\0").replace(b"\0", b" ")
json.dump({"names": names, "cmdline": cmd.hex()}, open(sys.argv[2], "w"))
EOF

run_wprof rec record --stats -p "$PID" -d 1.5 -f threads -o "$TMP/rec.folded" -o "$TMP/rec.threads" \
	-o "$TMP/rec.json" -o "$TMP/rec.svg" -o "$TMP/rec.pb.gz" -o "$TMP/rec.wprof"
check_wprof_ok rec
for f in rec.folded rec.threads rec.json rec.svg rec.pb.gz rec.wprof; do
	[ -s "$TMP/$f" ] || fatal "no $f written"
done
run_wprof rep report --stats "$TMP/rec.wprof" -o "$TMP/rep.folded" -o "$TMP/rep.json" \
	-f threads -o "$TMP/rep.threads"
check_wprof_ok rep
check_folded "$TMP/rec.folded"
check_folded "$TMP/rep.folded"
go tool pprof -raw "$TMP/rec.pb.gz" >"$TMP/pprof.raw" 2>"$TMP/pprof.err"
rc=$?
check "go tool pprof reads the pprof file (exit $rc; $(head -c 200 "$TMP/pprof.err"))" \
	test "$rc" -eq 0 -a -s "$TMP/pprof.raw" -a ! -s "$TMP/pprof.err"

# check.py KIND FILE: one `ok:`/`not ok:` line per check
cat >"$TMP/check.py" <<'EOF'
import gzip, json, sys, xml.etree.ElementTree as ET

kind, path = sys.argv[1], sys.argv[2]
truth = json.load(open(sys.argv[3]))
names = [bytes.fromhex(n) for n in truth["names"]]
cmdline = bytes.fromhex(truth["cmdline"])

def shown(c):
	o = ord(c)
	return o >= 0x20 and not 0x7f <= o <= 0x9f and o not in (0xfffe, 0xffff)

def safe(b):
	"""The rule: a character as is, each byte of a control or of what is not UTF-8 as \\xNN."""
	out, i = [], 0
	while i < len(b):
		c = None
		for n in (1, 2, 3, 4):
			try:
				c = b[i:i + n].decode("utf-8")
				break
			except UnicodeDecodeError:
				pass
		if c is not None and shown(c):
			out.append(c)
			i += len(c.encode())
		else:
			out.append("\\x%02x" % b[i])
			i += 1
	return "".join(out)

def check(what, cond):
	print(("ok: " if cond else "not ok: ") + "%s: %s" % (path.split("/")[-1], what))

def text_ok(data, allowed="\n"):
	"""Valid UTF-8, and no control character but the newline (and @allowed)."""
	try:
		s = data.decode("utf-8")
	except UnicodeDecodeError as e:
		check("valid UTF-8 (%s)" % e, False)
		return data.decode("utf-8", "replace") # for the checks that follow
	bad = [(i, hex(ord(c))) for i, c in enumerate(s) if c not in allowed and not shown(c)]
	check("valid UTF-8 with no control character (first: %s)" % (bad[:3],), not bad)
	return s

def have(what, forms, pool):
	miss = [f for f in forms if f not in pool]
	check("%s all there, escaped (missing: %s)" % (what, [ascii(m) for m in miss]), not miss)

plain = [safe(n) for n in names]
frame = [p.replace(";", ":") for p in plain]
data = open(path, "rb").read()
if kind == "pprof":
	data = gzip.decompress(data)

if kind == "stderr":
	s = text_ok(data)
	lines = s.split("\n")[:-1]
	check("every line starts with 'wprof: '", all(l.startswith("wprof: ") for l in lines))
	check("no forged line", not any(l.startswith("wprof: forged") for l in lines))
	have("thread names", ["(%s)" % p for p in plain], s)
	have("the command line", ["(%s)" % safe(cmdline)], s)
	check("a valid name passes unchanged", "ok\u00e9\u4e2d\U0001f600" in s)
elif kind == "threads":
	s = text_ok(data)
	rows = s.split("\n")[:-1]
	check("%d rows of 14 columns, for %d threads and their process" % (len(rows) - 1, len(names)),
	      len(rows) == len(names) + 2 and all(len(r.split()) == 14 for r in rows))
	check("no row starts with 'wprof:'", not any(r.startswith("wprof:") for r in rows))
	have("thread names", [p.replace(" ", "_") for p in plain], [r.split()[2] for r in rows])
elif kind == "folded":
	s = text_ok(data)
	tags = ("on-cpu", "steal", "off-cpu:sleep", "off-cpu:disk", "off-cpu:runqueue")
	bad, comms = [], set()
	for l in s.split("\n")[:-1]:
		stack, _, weight = l.rpartition(" ")
		f = stack.split(";")
		comms.add(f[1] if len(f) > 1 else "")
		if not weight.isdigit() or len(f) < 3 or f[0] not in tags or f[1] not in frame:
			bad.append(l[:80])
	check("every line is TAG;NAME;FRAME...[;FRAME] WEIGHT, NAME a thread's (bad: %s)" %
	      [ascii(b) for b in bad[:3]], not bad)
	have("thread names", frame, comms)
elif kind == "json":
	text_ok(data)
	def const(name):
		raise ValueError("not JSON: " + name)
	try:
		j = json.loads(data.decode("utf-8", "strict"), parse_constant=const)
	except ValueError as e:
		check("strict JSON (%s)" % e, False)
		sys.exit(0)
	check("strict JSON", True)
	have("thread names", plain, [t["comm"] for p in j["processes"] for t in p["threads"]])
	have("stacks' thread names", frame, [st["comm"] for st in j["stacks"]])
elif kind == "text":
	text_ok(data, "\n\t")
elif kind == "svg":
	text_ok(data, "\n\t") # the script's own indentation
	try:
		root = ET.fromstring(data)
	except ET.ParseError as e:
		check("well-formed XML (%s)" % e, False)
		sys.exit(0)
	check("well-formed XML", True)
	pool = set()
	for e in root.iter():
		pool.update(e.attrib.values())
		pool.add(e.text or "")
	have("thread names", frame, pool)
elif kind == "pprof":
	# Profile.string_table is field 6, length-delimited; walk the top level
	def varint(b, i):
		v = s = 0
		while True:
			v |= (b[i] & 0x7f) << s
			s += 7
			i += 1
			if not b[i - 1] & 0x80:
				return v, i
	strs, i = [], 0
	while i < len(data):
		key, i = varint(data, i)
		wt = key & 7
		if wt == 0:
			_, i = varint(data, i)
		elif wt == 2:
			n, i = varint(data, i)
			if key >> 3 == 6:
				strs.append(data[i:i + n])
			i += n
		else:
			check("wire type %d of field %d known" % (wt, key >> 3), False)
			sys.exit(0)
	bad = []
	for b in strs:
		try:
			if not all(shown(c) for c in b.decode("utf-8")):
				bad.append(b)
		except UnicodeDecodeError:
			bad.append(b)
	check("%d strings, all UTF-8 free of controls (bad: %s)" % (len(strs), bad[:3]), not bad)
	have("thread labels", frame, [b.decode("utf-8", "replace") for b in strs])
EOF

# pycheck KIND FILE: check.py's lines, a failed one failing the test
pycheck()
{
	local out

	out=$("$PYTHON" "$TMP/check.py" "$1" "$2" "$TMP/names.json" 2>&1)
	echo "$out"
	echo "$out" | grep -Eq '^(not )?ok: ' || not_ok "$(basename "$2"): check.py printed no check"
	echo "$out" | grep -q '^not ok' && LIB_FAILED=1
}

for f in rec rep; do
	pycheck stderr "$TMP/$f.err"
	pycheck threads "$TMP/$f.threads"
	pycheck folded "$TMP/$f.folded"
	pycheck json "$TMP/$f.json"
done
pycheck svg "$TMP/rec.svg"
pycheck pprof "$TMP/rec.pb.gz"
# what go tool pprof read back from the strings
pycheck text "$TMP/pprof.raw"
finish
