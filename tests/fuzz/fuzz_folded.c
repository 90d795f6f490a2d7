// SPDX-License-Identifier: GPL-2.0-only
/*
 * The folded format, both ways: the input as a line through the strict
 * parser (folded__parse_line()), and the input split at ';' into frames,
 * added, written, and every written line parsed back: whatever the frames
 * hold, the writer's output is valid folded text with the frames and the
 * weight that went in.
 */
#include "folded.h"
#include "fuzz.h"

#define MAX_FRAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = fuzz_str(data, size), *copy = fuzz_str(data, size), *p, *buf = NULL;
	const char *frames[MAX_FRAMES];
	size_t nr = 0, got_nr, len = 0, nlines = 0;
	struct folded *f;
	__u64 weight = size + 1, got_w;
	FILE *out;

	if (!folded__parse_line(line, &got_nr, &got_w))
		FUZZ_ASSERT(got_nr >= 1);
	/* frames: the pieces between ';' (empty ones too) */
	for (p = copy; nr < MAX_FRAMES; p++) {
		frames[nr++] = p;
		p = strchr(p, ';');
		if (!p)
			break;
		*p = '\0';
	}
	f = folded__new();
	FUZZ_ASSERT(f);
	FUZZ_ASSERT(!folded__add(f, frames, nr, weight));
	FUZZ_ASSERT(!folded__add(f, frames, nr, 1)); /* the same stack: merged */
	FUZZ_ASSERT(folded__nr(f) == 1);
	out = open_memstream(&buf, &len);
	FUZZ_ASSERT(out);
	FUZZ_ASSERT(!folded__write(f, out));
	fclose(out);
	for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		*nl = '\0';
		FUZZ_ASSERT(!folded__parse_line(l, &got_nr, &got_w));
		FUZZ_ASSERT(got_nr == nr);
		FUZZ_ASSERT(got_w == weight + 1);
		nlines++;
	}
	FUZZ_ASSERT(nlines == 1);
	folded__free(f);
	free(buf);
	free(copy);
	free(line);
	return 0;
}
