// SPDX-License-Identifier: GPL-2.0-only
/*
 * Itanium-mangled names, C++ and Rust legacy; Rust v0 is in demangle_v0.c.
 *
 * C++ names: __cxa_demangle() prints a function with everything in its
 * mangled name ("std::ostream& std::operator<< <char>(std::ostream&, char
 * const*)"); perf (libiberty without DMGL_PARAMS) shows only the qualified
 * name. demangle__cxx_strip() cuts the return type, the parameter list and
 * the qualifiers of the outermost function, and leaves the rest alone: the
 * parameters of an enclosing function in a local name stay
 * ("ns::f(int)::{lambda()#1}::operator()"), as libiberty prints them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* ---- C++ ---- */

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void cxa_load(void)
{
	/* Never dlclose()d: one C++ runtime for the life of the process. */
	void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (lib)
		cxa_demangle = (cxa_demangle_fn)dlsym(lib, "__cxa_demangle");
}

/* Names that are not functions: what follows the prefix is printed whole, as libiberty does. */
static const char *const special_prefixes[] = {
	"non-virtual thunk to ", "virtual thunk to ",	    "covariant return thunk to ",
	"construction vtable for ", "vtable for ",	    "VTT for ",
	"typeinfo for ",	    "typeinfo name for ",   "typeinfo fn for ",
	"guard variable for ",	    "TLS init function for ", "TLS wrapper function for ",
	"reference temporary #",    "hidden alias for ",    "transaction clone for ",
	"non-transaction clone for ",
};

/* Qualifiers of a member function, after its parameter list. */
static const char *const fn_qualifiers[] = {
	" const", " volatile", " &&", " &", " noexcept", " transaction_safe", " restrict",
};

/* Longest first, so that "<<=" is not taken for "<". */
static const char *const operators[] = {
	"<=>", "->*", "<<=", ">>=", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&",
	"||",  "++",  "--",  "+=",  "-=", "*=", "/=", "%=", "&=", "|=", "^=", ",",  "<",  ">",
	"+",   "-",   "*",   "/",   "%",  "&",  "|",  "^",  "~",  "!",  "=",
};

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Index of the '(' that matches the ')' at @close, or -1. */
static long open_paren_of(const char *s, long close)
{
	int depth = 0;
	long i;

	for (i = close; i >= 0; i--) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && !--depth)
			return i;
	}
	return -1;
}

/*
 * The operator spelled at @s (just past "operator"): its length, or -1 for
 * a conversion operator ("operator int"), whose type is the rest of the name.
 */
static long operator_len(const char *s)
{
	size_t i;

	if (starts_with(s, " new") || starts_with(s, " delete")) {
		long len = s[1] == 'n' ? 4 : 7;

		return starts_with(s + len, "[]") ? len + 2 : len;
	}
	if (s[0] == '"') { /* operator"" _suffix: a user-defined literal */
		long len = 2;

		while (s[len] == ' ')
			len++;
		while (is_ident(s[len]))
			len++;
		return len;
	}
	for (i = 0; i < sizeof(operators) / sizeof(operators[0]); i++)
		if (starts_with(s, operators[i]))
			return strlen(operators[i]);
	return -1;
}

/* Where the name starts in @s (a name maybe preceded by a return type): after the last top-level space. */
static size_t name_start(const char *s, size_t len)
{
	size_t i, start = 0, no_split = (size_t)-1;
	int depth = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == 'o' && (!i || !is_ident(s[i - 1])) && starts_with(s + i, "operator") &&
		    !is_ident(s[i + 8])) {
			long op = operator_len(s + i + 8);

			if (op < 0)
				break; /* a conversion: the type that follows is part of the name */
			i += 8 + op - 1;
			/* "operator<< <char>": that space is no boundary */
			no_split = i + 1;
			continue;
		}
		if (c == '(' || c == '<' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (c == ' ' && !depth && i != no_split)
			start = i + 1;
	}
	return start;
}

char *demangle__cxx_strip(const char *full)
{
	size_t i, len = strlen(full), start;
	long open;

	for (i = 0; i < sizeof(special_prefixes) / sizeof(special_prefixes[0]); i++)
		if (starts_with(full, special_prefixes[i]))
			return strdup(full);
	for (;;) {
		/* Qualifiers after the parameters: " const", " &&", ... */
		for (i = 0; i < sizeof(fn_qualifiers) / sizeof(fn_qualifiers[0]); i++) {
			size_t qlen = strlen(fn_qualifiers[i]);

			if (len > qlen && !strncmp(full + len - qlen, fn_qualifiers[i], qlen)) {
				len -= qlen;
				break;
			}
		}
		if (i == sizeof(fn_qualifiers) / sizeof(fn_qualifiers[0]))
			break;
	}
	if (!len || full[len - 1] != ')')
		return strdup(full); /* not a function: a variable, a template parameter object */
	open = open_paren_of(full, len - 1);
	if (open <= 0)
		return strdup(full);
	len = open;
	/*
	 * A function returning a pointer to function is printed inside out:
	 * "void (*ns::getfn(int))(int)". Its name is inside the parentheses.
	 */
	while (len > 2 && full[len - 1] == ')') {
		long o = open_paren_of(full, len - 1);
		char *inner, *res;

		if (o < 0 || (full[o + 1] != '*' && full[o + 1] != '&'))
			break;
		inner = strndup(full + o + 1, len - 1 - (o + 1));
		if (!inner)
			return NULL;
		for (i = 0; inner[i] == '*' || inner[i] == '&' || inner[i] == ' '; i++)
			;
		res = demangle__cxx_strip(inner + i);
		free(inner);
		return res;
	}
	start = name_start(full, len);
	while (len > start && full[len - 1] == ' ')
		len--;
	return strndup(full + start, len - start);
}

/* ---- Rust legacy ---- */

static const struct {
	const char *esc, *repl;
} legacy_escapes[] = {
	{ "$SP$", "@" }, { "$BP$", "*" }, { "$RF$", "&" }, { "$LT$", "<" },
	{ "$GT$", ">" }, { "$LP$", "(" }, { "$RP$", ")" }, { "$C$", "," },
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

size_t demangle__utf8(char *dst, __u32 cp)
{
	if (cp < 0x80) {
		dst[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		dst[0] = 0xc0 | cp >> 6;
		dst[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		dst[0] = 0xe0 | cp >> 12;
		dst[1] = 0x80 | (cp >> 6 & 0x3f);
		dst[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	dst[0] = 0xf0 | cp >> 18;
	dst[1] = 0x80 | (cp >> 12 & 0x3f);
	dst[2] = 0x80 | (cp >> 6 & 0x3f);
	dst[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/*
 * One identifier of a legacy name, unescaped, at @out; returns the end of
 * what was written, NULL on an unknown escape. No escape is shorter than
 * what it stands for, so the output never outgrows the input.
 */
static char *legacy_ident(char *out, const char *s, size_t len)
{
	size_t i = 0, k;

	if (len >= 2 && s[0] == '_' && s[1] == '$')
		i = 1; /* an identifier cannot start with '$': rustc put a '_' before it */
	while (i < len) {
		if (s[i] == '.') {
			bool two = i + 1 < len && s[i + 1] == '.';

			out = stpcpy(out, two ? "::" : ".");
			i += two ? 2 : 1;
			continue;
		}
		if (s[i] != '$') {
			*out++ = s[i++];
			continue;
		}
		for (k = 0; k < sizeof(legacy_escapes) / sizeof(legacy_escapes[0]); k++) {
			size_t elen = strlen(legacy_escapes[k].esc);

			if (i + elen <= len && !strncmp(s + i, legacy_escapes[k].esc, elen)) {
				out = stpcpy(out, legacy_escapes[k].repl);
				i += elen;
				break;
			}
		}
		if (k < sizeof(legacy_escapes) / sizeof(legacy_escapes[0]))
			continue;
		/* $uXX$: a character by its code; "$u7b$" is 5 bytes for at most 4 */
		if (i + 1 < len && s[i + 1] == 'u') {
			size_t j = i + 2;
			__u32 cp = 0;

			while (j < len && is_hex(s[j]) && j - i < 8)
				cp = cp << 4 | (s[j] <= '9' ? s[j] - '0' : s[j] - 'a' + 10), j++;
			if (j < len && s[j] == '$' && j > i + 2 && cp < 0x110000) {
				out += demangle__utf8(out, cp);
				i = j + 1;
				continue;
			}
		}
		return NULL;
	}
	return out;
}

char *demangle__rust_legacy(const char *name)
{
	const char *p = name + 3, *last = NULL, *end;
	char *res, *out;
	size_t n = 0, i;

	if (strncmp(name, "_ZN", 3))
		goto invalid;
	/* First pass: the parts and the hash, which tells Rust from C++. */
	while (*p >= '1' && *p <= '9') {
		size_t len = strtoul(p, (char **)&end, 10);

		if (strnlen(end, len) < len)
			goto invalid;
		last = end;
		p = end + len;
		n++;
	}
	if (*p != 'E' || n < 2 || p - last != 17 || last[0] != 'h')
		goto invalid;
	for (i = 1; i < 17; i++)
		if (!is_hex(last[i]))
			goto invalid;
	end = p + 1;
	if (*end && *end != '.')
		goto invalid;
	/* escapes only shrink; "::" between parts may outgrow 1-digit lengths */
	out = res = malloc(2 * strlen(name) + 1);
	if (!res)
		return NULL;
	for (p = name + 3; n > 1; n--) {
		size_t len = strtoul(p, (char **)&p, 10);

		if (out != res)
			out = stpcpy(out, "::");
		out = legacy_ident(out, p, len);
		if (!out) {
			free(res);
			goto invalid;
		}
		p += len;
	}
	strcpy(out, *end && strncmp(end, ".llvm.", 6) ? end : "");
	return res;
invalid:
	errno = EINVAL;
	return NULL;
}

/* ---- C++ ---- */

/* "_Z<encoding>.constprop.0": the mangled part ends at the first '.', which no mangling uses. */
static char *demangle_cxx(const char *name)
{
	const char *dot = strchr(name, '.');
	char *mangled, *full, *res = NULL;
	int status = -1;

	pthread_once(&cxa_once, cxa_load);
	if (!cxa_demangle) {
		errno = EINVAL;
		return NULL;
	}
	mangled = dot ? strndup(name, dot - name) : strdup(name);
	if (!mangled)
		return NULL;
	full = cxa_demangle(mangled, NULL, NULL, &status);
	free(mangled);
	if (!full || status) {
		free(full);
		errno = status == -1 ? ENOMEM : EINVAL;
		return NULL;
	}
	res = demangle__cxx_strip(full);
	free(full);
	if (res && dot && !starts_with(dot, ".llvm.")) {
		size_t len = strlen(res);
		char *tmp = realloc(res, len + strlen(dot) + 1);

		if (!tmp) {
			free(res);
			return NULL;
		}
		res = tmp;
		strcpy(res + len, dot);
	}
	return res;
}

char *demangle__name(const char *name)
{
	char *res;

	if (starts_with(name, "_R"))
		return demangle__rust_v0(name);
	if (!starts_with(name, "_Z")) {
		errno = EINVAL;
		return NULL;
	}
	/* Rust legacy names are valid C++ ones, but mean something else: Rust first. */
	res = demangle__rust_legacy(name);
	if (res || errno != EINVAL)
		return res;
	return demangle_cxx(name);
}
