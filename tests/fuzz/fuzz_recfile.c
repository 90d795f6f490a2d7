// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved recording's reader (recfile__parse()), two ways: the input as
 * the file itself (the gzip reader: foreign, cut and corrupt streams), and
 * the input as a file's uncompressed content, gzip-compressed here so that
 * the fuzzer reaches the sections past the gzip checksum. Whatever it is,
 * the reader refuses it with a reason, or reads it; what it read, every
 * writer writes without tripping (they take apart what the reader checked),
 * and every text it writes, the summary too, is safe text (safestr.h): the
 * file's strings, whatever their bytes, reach no terminal or parser raw.
 */
#include "fuzz.h"
#include "gzip.h"
#include "output.h"
#include "recfile.h"
#include "report.h"
#include "safestr.h"

/* @buf holds only characters safestr.h shows as they are, newlines and tabs. */
static void assert_safe(const char *buf, size_t len)
{
	for (size_t i = 0; i < len;) {
		bool space = buf[i] == '\n' || buf[i] == '\t';
		size_t n = space ? 1 : safestr__char_len(buf + i, len - i);

		FUZZ_ASSERT(n);
		i += n;
	}
}

static void try(const void *data, size_t size)
{
	static const enum output_format formats[] = {
		FORMAT_FOLDED, FORMAT_JSON, FORMAT_THREADS, FORMAT_SVG, FORMAT_PPROF, FORMAT_WPROF,
	};
	struct recording r;
	char why[256] = "";
	int err = recfile__parse(data, size, &r, why, sizeof(why));

	if (err) {
		FUZZ_ASSERT(why[0] && strcmp(why, "?"));
		FUZZ_ASSERT(!r.lines && !r.prof.threads && !r.cmdline);
		return;
	}
	for (size_t i = 0; i <= sizeof(formats) / sizeof(formats[0]); i++) {
		bool summary = i == sizeof(formats) / sizeof(formats[0]);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		FUZZ_ASSERT(f);
		if (summary)
			report__summary(&r, f, true);
		else
			output__write(&r, formats[i], f);
		fclose(f);
		/* (pprof and a recording are binary; test_safestr checks pprof's strings) */
		if (summary || (formats[i] != FORMAT_PPROF && formats[i] != FORMAT_WPROF))
			assert_safe(buf, len);
		free(buf);
	}
	recording__free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *gz = NULL;
	size_t len = 0;
	FILE *f;

	try(data, size);
	f = open_memstream(&gz, &len);
	FUZZ_ASSERT(f);
	FUZZ_ASSERT(!gzip__write(data, size, f));
	fclose(f);
	try(gz, len);
	free(gz);
	return 0;
}
