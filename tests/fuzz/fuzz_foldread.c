// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded text read a line at a time in bounded memory (foldread.c), with
 * limits small enough for the fuzzer's inputs to cross them (the first
 * three bytes choose them; the next two are what the caller read first):
 * every line is what the strict parser of a whole line (folded__parse_line())
 * says it is, with its weight; a stack within the limits comes back as it
 * is; one beyond them is within them, cut to whole frames from the root,
 * the marker, and the leaf when it is kept. A line of any length is read.
 */
#include <errno.h>

#include "folded.h"
#include "foldread.h"
#include "fuzz.h"

/* The next line of @text (@end): its start and length, or NULL at the end. */
static const char *next_line(const char **text, const char *end, size_t *len)
{
	const char *s = *text, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', end - s);
	*len = (nl ? nl : end) - s;
	*text = nl ? nl + 1 : end;
	return s;
}

static size_t frames_of(const char *s, size_t len)
{
	size_t n = 1;

	for (size_t i = 0; i < len; i++)
		n += s[i] == ';';
	return n;
}

/* Whether @got (@glen) is whole frames of @orig from the root, then the marker. */
static bool root_then_mark(const char *orig, size_t olen, const char *got, size_t glen)
{
	size_t mlen = strlen(STACKCAP_MARK), root;

	if (glen < mlen || memcmp(got + glen - mlen, STACKCAP_MARK, mlen))
		return false;
	root = glen - mlen;
	/* "a;b;" of "a;b;c;...": the frames kept end where one of the original did */
	return root <= olen && !memcmp(got, orig, root) &&
	       (!root || (got[root - 1] == ';' && orig[root - 1] == ';'));
}

/* A cut stack: whole frames of @orig from the root, the marker, maybe @orig's leaf. */
static void check_cut(const struct stackcap *lim, const char *orig, size_t olen,
		      const char *got, size_t glen)
{
	const char *semi = memrchr(got, ';', glen), *last = memrchr(orig, ';', olen);
	bool with_leaf = false;

	FUZZ_ASSERT(glen <= lim->bytes && frames_of(got, glen) <= lim->frames);
	/* the leaf kept: the original's last frame, after the marker */
	if (semi && last && glen - (semi + 1 - got) <= lim->leaf &&
	    glen - (semi + 1 - got) == olen - (last + 1 - orig) &&
	    !memcmp(semi + 1, last + 1, glen - (semi + 1 - got)))
		with_leaf = root_then_mark(orig, olen, got, semi - got);
	FUZZ_ASSERT(with_leaf || root_then_mark(orig, olen, got, glen));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stackcap lim;
	struct foldread fr;
	const char *text, *end, *line;
	size_t pre, len;
	FILE *f;

	if (size < 4)
		return 0;
	lim.frames = 3 + data[0] % 6;
	lim.leaf = 1 + data[1] % 12;
	lim.bytes = 26 + lim.leaf + data[2] % 40;
	data += 3;
	size -= 3;
	pre = size < 2 ? size : 2;
	text = (const char *)data;
	end = text + size;
	f = size > pre ? fmemopen((void *)(data + pre), size - pre, "r") : fopen("/dev/null", "r");
	FUZZ_ASSERT(f);
	FUZZ_ASSERT(!foldread__init(&fr, f, &lim, data, pre));
	while ((line = next_line(&text, end, &len))) {
		char *whole, *stack, *sp;
		size_t slen;
		__u64 w, want_w;
		bool cut, ok;
		int ret;

		if (!len)
			continue;
		whole = fuzz_str((const uint8_t *)line, len);
		ok = strlen(whole) == len && !folded__parse_line(whole, NULL, &want_w);
		ret = foldread__next(&fr, &stack, &slen, &w, &cut);
		sp = strrchr(whole, ' ');
		/* a weight written with thousands of leading zeros is refused when read past */
		if (ok || ret == 1)
			FUZZ_ASSERT(ret == 1 || (sp && strlen(sp) > 32));
		if (ret != 1) {
			FUZZ_ASSERT(ret == -EINVAL);
			free(whole);
			break; /* the caller stops at the first line that is not folded */
		}
		FUZZ_ASSERT(ok && w == want_w && strlen(stack) == slen);
		*sp = '\0';
		if (cut)
			check_cut(&lim, whole, sp - whole, stack, slen);
		else
			FUZZ_ASSERT(!strcmp(stack, whole) && slen <= lim.bytes &&
				    frames_of(stack, slen) <= lim.frames);
		free(whole);
	}
	if (!line) {
		char *stack;
		size_t slen;
		__u64 w;
		bool cut;

		FUZZ_ASSERT(foldread__next(&fr, &stack, &slen, &w, &cut) == 0);
	}
	foldread__free(&fr);
	fclose(f);
	return 0;
}
