# SPDX-License-Identifier: GPL-2.0-only
# Fuzz harnesses (tests/fuzz/fuzz_*.c; included by the top Makefile): each
# is a libFuzzer target, built with clang and ASan + UBSan into
# $(OUT)/fuzz/, the modules it needs compiled there again with the same
# instrumentation (fuzzer-no-link: coverage for libFuzzer to follow).
# tests/fuzz/run.sh runs them: `make fuzz` (FUZZ_SECONDS each), and
# tests/integration/fuzz.sh for a few seconds each in `make check`.

FUZZ_DIR     := $(OUT)/fuzz
FUZZ_CC      ?= $(CLANG)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -Wall -Wextra -Wno-unused-parameter
# what the parsers under test are made of
FUZZ_MODS    := safestr folded foldread stackcap perfmap procmaps proclive kallsyms elfsyms sectsyms zsects demangle demangle_v0 dwinline hmap util
# the unwind tables (src/unwtab.c is included by its harness)
FUZZ_MODS    += cfirows ehrows rowalloc
# the saved recording's reader, and the writers that read what it read
FUZZ_MODS    += recfile recfile_write recfile_time recfile_ran raninst cgcpu statnames bytebuf gzip recording recline profile_data recinfo output outfile report timeline threadtime svg \
		svgstrip flame pprof strmap origins
# what the outputs group the threads' stacks with (--group)
FUZZ_MODS    += group recgroup
FUZZ_OBJS    := $(patsubst %,$(FUZZ_DIR)/obj/%.o,$(FUZZ_MODS))
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRCS))
FUZZ_LDLIBS  := -Wl,-Bstatic -lbpf -Wl,-Bdynamic -lelf -ldw -lz -llzma -lpthread -ldl
FUZZ_SECONDS ?= 20

$(FUZZ_DIR)/obj/%.o: src/%.c
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) $(DEPFLAGS) -c $< -o $@

$(FUZZ_DIR)/obj/svg.o: $(OUT)/svg_js.h

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	$(call msg,FUZZLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) $(DEPFLAGS) $< $(FUZZ_OBJS) \
		-o $@ $(FUZZ_LDLIBS)

.PHONY: fuzz
fuzz: $(FUZZ_BINS) test-bins
	$(Q)OUT=$(OUT) FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh

# not intermediates: kept, so that a harness edit rebuilds only itself
.SECONDARY: $(FUZZ_OBJS)

TEST_FIXTURES += $(FUZZ_BINS)

-include $(FUZZ_OBJS:.o=.d) $(patsubst %,%.d,$(FUZZ_BINS))
