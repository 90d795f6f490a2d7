// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rust v0 symbol names (RFC 2603): the mangling of the standard library
 * as rustup ships it, and of crates built with -C symbol-mangling-version=v0.
 * A small grammar of paths, types and constants with back-references,
 *
 *	_RNvMCs4fqI2P2rA04_7mycrateINtB2_3FoohE6method
 *
 * printed like rustc-demangle's alternate form, without crate
 * disambiguators (hashes): <mycrate::Foo<u8>>::method.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "demangle.h"

/* Symbols nest; back-references make output grow fast. Past these, give up. */
#define MAX_DEPTH 300
#define MAX_OUT (64 * 1024)
#define MAX_IDENT_CHARS 512

struct out {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void put_n(struct out *o, const char *s, size_t n)
{
	if (o->failed)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 128;
		char *tmp;

		while (cap < o->len + n + 1)
			cap *= 2;
		if (cap > MAX_OUT || !(tmp = realloc(o->buf, cap))) {
			o->failed = true;
			return;
		}
		o->buf = tmp;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void put(struct out *o, const char *s)
{
	put_n(o, s, strlen(s));
}

static char *out_finish(struct out *o, bool ok)
{
	if (ok && !o->failed && o->buf)
		return o->buf;
	free(o->buf);
	errno = ok && o->failed ? ENOMEM : EINVAL;
	return NULL;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hex_val(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static void put_utf8(struct out *o, __u32 cp)
{
	char b[4];

	put_n(o, b, demangle__utf8(b, cp));
}

/* ---- v0 ---- */

struct v0 {
	const char *sym; /* after "_R"; back-references are offsets in it */
	size_t pos, len;
	struct out *o;
	int depth;
	int skip;	       /* > 0: parse without printing */
	__u32 bound_lifetimes; /* for<'a, ...> binders open around the current type */
	bool bad;
};

static void emit(struct v0 *d, const char *s)
{
	if (!d->skip)
		put(d->o, s);
}

static void emit_n(struct v0 *d, const char *s, size_t n)
{
	if (!d->skip)
		put_n(d->o, s, n);
}

static char peek(const struct v0 *d)
{
	return d->pos < d->len ? d->sym[d->pos] : '\0';
}

static bool eat(struct v0 *d, char c)
{
	if (peek(d) != c || d->bad)
		return false;
	d->pos++;
	return true;
}

static char next(struct v0 *d)
{
	char c = peek(d);

	if (!c)
		d->bad = true;
	else
		d->pos++;
	return c;
}

/* <base-62-number>: "_" is 0, else digits then "_" are the value plus 1. */
static __u64 base62(struct v0 *d)
{
	__u64 x = 0;
	char c;

	if (eat(d, '_'))
		return 0;
	while ((c = next(d)) != '_' && !d->bad) {
		int v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'Z')
			v = c - 'A' + 36;
		else {
			d->bad = true;
			break;
		}
		if (x > (~0ULL - v) / 62) {
			d->bad = true;
			break;
		}
		x = x * 62 + v;
	}
	return d->bad ? 0 : x + 1;
}

/* An optional "<tag><base-62-number>", as value + 1; 0 when absent. */
static __u64 opt_base62(struct v0 *d, char tag)
{
	return eat(d, tag) ? base62(d) + 1 : 0;
}

static __u64 decimal(struct v0 *d)
{
	__u64 x = 0;

	if (peek(d) == '0') {
		d->pos++;
		return 0;
	}
	if (peek(d) < '1' || peek(d) > '9')
		d->bad = true;
	while (!d->bad && peek(d) >= '0' && peek(d) <= '9') {
		if (x > 1000000)
			d->bad = true;
		x = x * 10 + (next(d) - '0');
	}
	return x;
}

static __u32 puny_adapt(__u32 delta, __u32 points, bool first)
{
	__u32 k = 0;

	delta = first ? delta / 700 : delta / 2;
	delta += delta / points;
	while (delta > 35 * 26 / 2) {
		delta /= 35;
		k += 36;
	}
	return k + 36 * delta / (delta + 38);
}

/* RFC 3492 with '_' for '-': "<basic chars>_<deltas>" or just "<deltas>". */
static bool punycode(struct v0 *d, const char *s, size_t len)
{
	__u32 cps[MAX_IDENT_CHARS], n = 128, i = 0, bias = 72, nr = 0, k;
	const char *sep = NULL, *p;

	for (p = s; p < s + len; p++)
		if (*p == '_')
			sep = p;
	if (sep) {
		for (p = s; p < sep && nr < MAX_IDENT_CHARS; p++)
			cps[nr++] = (unsigned char)*p;
		p = sep + 1;
	} else {
		p = s;
	}
	while (p < s + len) {
		__u32 old_i = i, w = 1;

		for (k = 36;; k += 36) {
			__u32 digit, t;
			char c;

			if (p == s + len)
				return false;
			c = *p++;
			if (c >= 'a' && c <= 'z')
				digit = c - 'a';
			else if (c >= '0' && c <= '9')
				digit = c - '0' + 26;
			else
				return false;
			if (digit > (0x7fffffffU - i) / w)
				return false;
			i += digit * w;
			t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
			if (digit < t)
				break;
			w *= 36 - t;
		}
		if (nr == MAX_IDENT_CHARS)
			return false;
		bias = puny_adapt(i - old_i, nr + 1, old_i == 0);
		n += i / (nr + 1);
		i %= nr + 1;
		if (n > 0x10ffff)
			return false;
		memmove(cps + i + 1, cps + i, (nr - i) * sizeof(cps[0]));
		cps[i++] = n;
		nr++;
	}
	for (k = 0; k < nr && !d->skip; k++)
		put_utf8(d->o, cps[k]);
	return true;
}

/* <identifier> without its disambiguator; its bytes go to *@s, *@len (punycode: *@puny). */
static void ident(struct v0 *d, const char **s, size_t *len, bool *puny)
{
	*puny = eat(d, 'u');
	*len = decimal(d);
	eat(d, '_'); /* separates the length from an identifier that starts with a digit or '_' */
	if (d->bad || *len > d->len - d->pos) {
		d->bad = true;
		*len = 0;
	}
	*s = d->sym + d->pos;
	d->pos += *len;
}

static void emit_ident(struct v0 *d, const char *s, size_t len, bool puny)
{
	if (puny && !punycode(d, s, len))
		d->bad = true;
	else if (!puny)
		emit_n(d, s, len);
}

static void path(struct v0 *d, bool in_value);
static void type(struct v0 *d);
static void constant(struct v0 *d);
static bool trait_path(struct v0 *d);

enum backref_to { TO_PATH, TO_VALUE_PATH, TO_TYPE, TO_CONST, TO_TRAIT };

/* Follow a back-reference; returns what trait_path() does for TO_TRAIT. */
static bool backref(struct v0 *d, enum backref_to to)
{
	size_t at = d->pos - 1, saved;
	__u64 target = base62(d);
	bool open = false;

	/* Past MAX_OUT, stop: back-references can make the output exponential. */
	if (d->bad || target >= at || d->o->failed) {
		d->bad = true;
		return false;
	}
	if (d->skip)
		return false; /* nothing to print: the text there was parsed already */
	saved = d->pos;
	d->pos = target;
	switch (to) {
	case TO_PATH:
	case TO_VALUE_PATH:
		path(d, to == TO_VALUE_PATH);
		break;
	case TO_TYPE:
		type(d);
		break;
	case TO_CONST:
		constant(d);
		break;
	case TO_TRAIT:
		open = trait_path(d);
		break;
	}
	d->pos = saved;
	return open;
}

static void lifetime(struct v0 *d, __u64 lt)
{
	char buf[32];

	if (!lt) {
		emit(d, "'_");
		return;
	}
	if (lt > d->bound_lifetimes) {
		d->bad = true;
		return;
	}
	lt = d->bound_lifetimes - lt;
	if (lt < 26)
		snprintf(buf, sizeof(buf), "'%c", (char)('a' + lt));
	else
		snprintf(buf, sizeof(buf), "'_%llu", (unsigned long long)lt);
	emit(d, buf);
}

/* "for<'a, 'b> " of an optional binder; returns how many lifetimes it binds. */
static __u64 binder(struct v0 *d)
{
	__u64 n = opt_base62(d, 'G'), i;

	if (!n)
		return 0;
	if (n > 1000) {
		d->bad = true;
		return 0;
	}
	emit(d, "for<");
	for (i = 0; i < n; i++) {
		if (i)
			emit(d, ", ");
		d->bound_lifetimes++;
		lifetime(d, 1);
	}
	emit(d, "> ");
	return n;
}

/* Generic arguments up to their 'E'; the closing '>' is left to the caller. */
static void generic_args_open(struct v0 *d)
{
	int i;

	emit(d, "<");
	for (i = 0; !d->bad && !eat(d, 'E'); i++) {
		if (i)
			emit(d, ", ");
		if (eat(d, 'L'))
			lifetime(d, base62(d));
		else if (eat(d, 'K'))
			constant(d);
		else
			type(d);
	}
}

static void path(struct v0 *d, bool in_value)
{
	const char *s;
	size_t len;
	bool puny;
	char tag, ns;

	if (++d->depth > MAX_DEPTH)
		d->bad = true;
	tag = next(d);
	if (d->bad)
		goto out;
	switch (tag) {
	case 'C': /* crate root; its disambiguator is the crate hash: not printed */
		opt_base62(d, 's');
		ident(d, &s, &len, &puny);
		emit_ident(d, s, len, puny);
		break;
	case 'N': {
		__u64 dis;

		ns = next(d);
		path(d, in_value);
		dis = opt_base62(d, 's');
		ident(d, &s, &len, &puny);
		if (ns >= 'A' && ns <= 'Z') {
			/* special namespaces: closures, shims */
			char buf[48];

			emit(d, "::{");
			emit(d, ns == 'C' ? "closure" : ns == 'S' ? "shim" : (char[]){ ns, 0 });
			if (len) {
				emit(d, ":");
				emit_ident(d, s, len, puny);
			}
			snprintf(buf, sizeof(buf), "#%llu}", (unsigned long long)dis);
			emit(d, buf);
		} else if (len) {
			emit(d, "::");
			emit_ident(d, s, len, puny);
		}
		break;
	}
	case 'M': /* inherent impl: <Type> */
	case 'X': /* trait impl: <Type as Trait> */
	case 'Y': /* trait definition: <Type as Trait> */
		if (tag != 'Y') {
			opt_base62(d, 's');
			d->skip++; /* the impl's own path only tells impls apart */
			path(d, false);
			d->skip--;
		}
		emit(d, "<");
		type(d);
		if (tag != 'M') {
			emit(d, " as ");
			path(d, false);
		}
		emit(d, ">");
		break;
	case 'I':
		path(d, in_value);
		if (in_value)
			emit(d, "::");
		generic_args_open(d);
		emit(d, ">");
		break;
	case 'B':
		backref(d, in_value ? TO_VALUE_PATH : TO_PATH);
		break;
	default:
		d->bad = true;
	}
out:
	d->depth--;
}

static const char *basic_type(char tag)
{
	static const char *const names[26] = {
		['a' - 'a'] = "i8",  ['b' - 'a'] = "bool",  ['c' - 'a'] = "char", ['d' - 'a'] = "f64",
		['e' - 'a'] = "str", ['f' - 'a'] = "f32",   ['h' - 'a'] = "u8",   ['i' - 'a'] = "isize",
		['j' - 'a'] = "usize", ['l' - 'a'] = "i32", ['m' - 'a'] = "u32",  ['n' - 'a'] = "i128",
		['o' - 'a'] = "u128", ['p' - 'a'] = "_",    ['s' - 'a'] = "i16",  ['t' - 'a'] = "u16",
		['u' - 'a'] = "()",  ['v' - 'a'] = "...",   ['x' - 'a'] = "i64",  ['y' - 'a'] = "u64",
		['z' - 'a'] = "!",
	};

	return tag >= 'a' && tag <= 'z' ? names[tag - 'a'] : NULL;
}

static void fn_sig(struct v0 *d)
{
	__u64 bound = binder(d);
	int i;

	if (eat(d, 'U'))
		emit(d, "unsafe ");
	if (eat(d, 'K')) {
		emit(d, "extern \"");
		if (eat(d, 'C')) {
			emit(d, "C");
		} else {
			const char *s;
			size_t len, k;
			bool puny;

			ident(d, &s, &len, &puny);
			for (k = 0; k < len && !puny; k++) /* "system_unwind" is "system-unwind" */
				emit_n(d, s[k] == '_' ? "-" : s + k, 1);
		}
		emit(d, "\" ");
	}
	emit(d, "fn(");
	for (i = 0; !d->bad && !eat(d, 'E'); i++) {
		if (i)
			emit(d, ", ");
		type(d);
	}
	emit(d, ")");
	if (!eat(d, 'u')) {
		emit(d, " -> ");
		type(d);
	}
	d->bound_lifetimes -= bound;
}

/*
 * The path of a dyn trait, its generic arguments left open when it has
 * some: associated type bindings go in there too, "Fn<(u8,), Output = u8>".
 * Returns whether a '<' is open.
 */
static bool trait_path(struct v0 *d)
{
	bool open = false;

	if (++d->depth > MAX_DEPTH)
		d->bad = true;
	if (!d->bad && eat(d, 'B')) {
		open = backref(d, TO_TRAIT);
	} else if (!d->bad && eat(d, 'I')) {
		path(d, false);
		generic_args_open(d);
		open = true;
	} else {
		path(d, false);
	}
	d->depth--;
	return open;
}

static void dyn_bounds(struct v0 *d)
{
	__u64 bound;
	int i;

	emit(d, "dyn ");
	bound = binder(d);
	for (i = 0; !d->bad && !eat(d, 'E'); i++) {
		bool open;

		if (i)
			emit(d, " + ");
		open = trait_path(d);
		while (!d->bad && eat(d, 'p')) {
			const char *s;
			size_t len;
			bool puny;

			emit(d, open ? ", " : "<");
			open = true;
			ident(d, &s, &len, &puny);
			emit_ident(d, s, len, puny);
			emit(d, " = ");
			type(d);
		}
		if (open)
			emit(d, ">");
	}
	d->bound_lifetimes -= bound;
	if (eat(d, 'L')) {
		__u64 lt = base62(d);

		if (lt) {
			emit(d, " + ");
			lifetime(d, lt);
		}
	}
}

static void type(struct v0 *d)
{
	const char *basic;
	char tag;
	int i;

	if (++d->depth > MAX_DEPTH)
		d->bad = true;
	tag = next(d);
	if (d->bad)
		goto out;
	basic = basic_type(tag);
	if (basic) {
		emit(d, basic);
		goto out;
	}
	switch (tag) {
	case 'R':
	case 'Q':
		emit(d, "&");
		if (eat(d, 'L')) {
			__u64 lt = base62(d);

			if (lt) {
				lifetime(d, lt);
				emit(d, " ");
			}
		}
		if (tag == 'Q')
			emit(d, "mut ");
		type(d);
		break;
	case 'P':
		emit(d, "*const ");
		type(d);
		break;
	case 'O':
		emit(d, "*mut ");
		type(d);
		break;
	case 'A':
	case 'S':
		emit(d, "[");
		type(d);
		if (tag == 'A') {
			emit(d, "; ");
			constant(d);
		}
		emit(d, "]");
		break;
	case 'T':
		emit(d, "(");
		for (i = 0; !d->bad && !eat(d, 'E'); i++) {
			if (i)
				emit(d, ", ");
			type(d);
		}
		emit(d, i == 1 ? ",)" : ")");
		break;
	case 'F':
		fn_sig(d);
		break;
	case 'D':
		dyn_bounds(d);
		break;
	case 'B':
		backref(d, TO_TYPE);
		break;
	default:
		d->pos--;
		path(d, false);
	}
out:
	d->depth--;
}

/* "<hex digits>_" of a constant's value, as bytes of at most 64 bits. */
static __u64 const_hex(struct v0 *d, int *digits)
{
	__u64 x = 0;
	char c;

	*digits = 0;
	while ((c = next(d)) != '_' && !d->bad) {
		if (!is_hex(c)) {
			d->bad = true;
			break;
		}
		x = x << 4 | hex_val(c);
		(*digits)++;
	}
	return x;
}

static void const_str(struct v0 *d)
{
	emit(d, "\"");
	while (!d->bad && !eat(d, '_')) {
		char a = next(d), b = next(d), c;

		if (!is_hex(a) || !is_hex(b)) {
			d->bad = true;
			break;
		}
		c = hex_val(a) << 4 | hex_val(b);
		emit_n(d, c == '"' ? "\\\"" : &c, c == '"' ? 2 : 1);
	}
	emit(d, "\"");
}

static void constant(struct v0 *d)
{
	char tag, buf[48];
	bool neg;
	int i, digits;
	__u64 v;

	if (++d->depth > MAX_DEPTH)
		d->bad = true;
	tag = next(d);
	if (d->bad)
		goto out;
	switch (tag) {
	case 'p':
		emit(d, "_");
		break;
	case 'a': case 's': case 'l': case 'x': case 'n': case 'i':
	case 'h': case 't': case 'm': case 'y': case 'o': case 'j':
		neg = eat(d, 'n');
		v = const_hex(d, &digits);
		if (digits > 16)
			d->bad = true; /* 128-bit values past 64 bits: rare enough to give up */
		snprintf(buf, sizeof(buf), "%s%llu", neg ? "-" : "", (unsigned long long)v);
		emit(d, buf);
		break;
	case 'b':
		v = const_hex(d, &digits);
		if (v > 1)
			d->bad = true;
		emit(d, v ? "true" : "false");
		break;
	case 'c':
		v = const_hex(d, &digits);
		if (v > 0x10ffff) {
			d->bad = true;
			break;
		}
		emit(d, "'");
		if (!d->skip)
			put_utf8(d->o, v);
		emit(d, "'");
		break;
	case 'e':
		const_str(d);
		break;
	case 'R':
	case 'Q':
		/* a &str constant prints as its literal */
		if (tag == 'R' && eat(d, 'e')) {
			const_str(d);
			break;
		}
		emit(d, tag == 'R' ? "&" : "&mut ");
		constant(d);
		break;
	case 'A':
	case 'T':
		emit(d, tag == 'A' ? "[" : "(");
		for (i = 0; !d->bad && !eat(d, 'E'); i++) {
			if (i)
				emit(d, ", ");
			constant(d);
		}
		emit(d, tag == 'A' ? "]" : i == 1 ? ",)" : ")");
		break;
	case 'V': /* a value of a struct or enum variant */
		path(d, true);
		if (eat(d, 'T')) {
			emit(d, "(");
			for (i = 0; !d->bad && !eat(d, 'E'); i++) {
				if (i)
					emit(d, ", ");
				constant(d);
			}
			emit(d, ")");
		} else if (eat(d, 'S')) {
			emit(d, " { ");
			for (i = 0; !d->bad && !eat(d, 'E'); i++) {
				const char *s;
				size_t len;
				bool puny;

				if (i)
					emit(d, ", ");
				opt_base62(d, 's');
				ident(d, &s, &len, &puny);
				emit_ident(d, s, len, puny);
				emit(d, ": ");
				constant(d);
			}
			emit(d, " }");
		} else if (!eat(d, 'U')) {
			d->bad = true;
		}
		break;
	case 'B':
		backref(d, TO_CONST);
		break;
	default:
		d->bad = true;
	}
out:
	d->depth--;
}

char *demangle__rust_v0(const char *name)
{
	struct out o = {};
	struct v0 d = { .o = &o };
	const char *suffix;

	if (strncmp(name, "_R", 2)) {
		errno = EINVAL;
		return NULL;
	}
	d.sym = name + 2;
	/* The mangled part ends where a vendor suffix (".llvm.123") starts. */
	d.len = strcspn(d.sym, ".$");
	suffix = d.sym + d.len;
	if (peek(&d) >= '0' && peek(&d) <= '9' && decimal(&d) != 0)
		d.bad = true; /* an encoding version we do not know */
	path(&d, true);
	/* The instantiating crate: parsed, not printed. */
	if (!d.bad && d.pos < d.len) {
		d.skip++;
		path(&d, false);
		d.skip--;
	}
	if (!d.bad && d.pos != d.len)
		d.bad = true;
	if (*suffix && strncmp(suffix, ".llvm.", 6))
		put(&o, suffix);
	return out_finish(&o, !d.bad);
}
