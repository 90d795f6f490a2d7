# SPDX-License-Identifier: GPL-2.0-only
# wprof: wall-clock (on-CPU + off-CPU) profiler.
#
#   make            build build/wprof
#   make check      install missing Debian packages, build, run all tests
#   make demo       record the bundled sleep/burn workload as a flame graph
#   make bench      overhead and symbolization benchmarks
#   make check-sanitize  ASan + UBSan build (build/san): unit tests and records
#   make fuzz       the parsers under libFuzzer, FUZZ_SECONDS=20 each
#   make install    PREFIX=/usr/local DESTDIR=
#   V=1             show the commands
#   WERROR=         do not stop at warnings (e.g. CFLAGS=-fsanitize=address)

OUT      ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS   ?= -O2 -g
# WERROR= (empty) builds with warnings as warnings: sanitizer builds warn more.
WERROR   ?= -Werror
WARN     := -Wall -Wextra $(WERROR) -Wno-unused-parameter
CPPFLAGS := -Iinclude -Isrc -I$(OUT) -D_GNU_SOURCE
DEPFLAGS  = -MMD -MP
# libbpf is linked statically (Debian ships libbpf.a); the rest dynamically.
LDLIBS   := -Wl,-Bstatic -lbpf -Wl,-Bdynamic -lelf -ldw -lz -llzma -lpthread

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
# One .bpf.c per concern; the static linker merges them (and their shared
# __weak maps) into one object, embedded through one skeleton.
SKELS    := $(OUT)/wprof.skel.h

SRCS     := $(wildcard src/*.c)
OBJS     := $(patsubst src/%.c,$(OUT)/obj/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(OUT)/obj/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
WORK_SRCS := $(wildcard tests/workloads/*.c)
WORK_BINS := $(patsubst tests/workloads/%.c,$(OUT)/tests/workloads/%,$(WORK_SRCS))

.PHONY: all deps check check-sanitize test demo bench install clean
all: $(OUT)/wprof

deps:
	$(Q)bash scripts/install-deps.sh

$(OUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)if [ ! -r "$(VMLINUX_BTF)" ]; then \
		echo "wprof build: no kernel BTF at $(VMLINUX_BTF); set VMLINUX_BTF=path" >&2; exit 1; fi
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(OUT)/vmlinux.h include/wprof.h $(wildcard bpf/*.bpf.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(OUT) \
		-mcpu=v3 -Wall -Werror -c $< -o $@
	$(Q)llvm-strip -g $@

$(OUT)/bpf/wprof.o: $(BPF_OBJS)
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUT)/wprof.skel.h: $(OUT)/bpf/wprof.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name wprof_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/obj/%.o: src/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $(DEPFLAGS) -c $< -o $@

# src/svg.js, the script of the flame graphs, as a C string for svg.c.
$(OUT)/svg_js.h: src/svg.js
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ echo 'static const char svg_js[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } >$@.tmp
	$(Q)mv $@.tmp $@
$(OUT)/obj/svg.o: $(OUT)/svg_js.h

$(OUT)/wprof: $(OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# Unit tests link every module but main.c.
$(OUT)/tests/%: tests/unit/%.c $(LIB_OBJS) tests/unit/unit.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -Itests/unit $(DEPFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

# Workloads are built with frame pointers so that a plain FP walk names them.
WORK_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline -pthread
$(OUT)/tests/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORK_CFLAGS) -Wall -Wextra -Werror $< -o $@ -pthread

# Test fixtures with their own build rules (PIE + shared lib, stripped, ...).
-include tests/*.mk

test-bins: $(UNIT_BINS) $(WORK_BINS) $(TEST_FIXTURES)

check: deps
	$(Q)$(MAKE) --no-print-directory all test-bins
	$(Q)OUT=$(OUT) bash tests/run.sh

# The fast tier, before every commit: the unit tests and the docs check, no
# root, no BPF, no packages installed (a case that needs root says so and is
# skipped), in seconds. make check runs them too, with the rest.
test: all $(UNIT_BINS)
	$(Q)OUT=$(OUT) TESTS='^test_ ^docs$$' bash tests/run.sh

# ASan and UBSan over the unit tests and records of real processes (root):
# a build of its own, undefined behaviour fatal, warnings not (the
# sanitizers make gcc warn where it does not otherwise), and leaks reported.
SAN_OUT   ?= $(OUT)/san
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

check-sanitize: deps
	$(Q)$(MAKE) --no-print-directory OUT=$(SAN_OUT) CFLAGS="$(SAN_FLAGS)" WERROR= all test-bins
	$(Q)$(SAN_ENV) OUT=$(SAN_OUT) SCRIPTS=tests/sanitize bash tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(OUT)/tests/workloads/sleepburn
	$(Q)$(OUT)/wprof record -d 3 -o $(OUT)/demo.svg -o $(OUT)/demo.folded -- \
		$(OUT)/tests/workloads/sleepburn
	@echo "wprof demo: flame graph $(abspath $(OUT))/demo.svg (open it in a browser)," \
		"folded stacks $(abspath $(OUT))/demo.folded"

bench:
	$(Q)bash scripts/install-deps.sh --bench
	$(Q)$(MAKE) --no-print-directory all test-bins
	$(Q)OUT=$(OUT) bash scripts/bench.sh

install: $(OUT)/wprof
	install -D -m 0755 $(OUT)/wprof $(DESTDIR)$(PREFIX)/sbin/wprof
	install -D -m 0644 man/wprof.8 $(DESTDIR)$(PREFIX)/share/man/man8/wprof.8

clean:
	rm -rf $(OUT)

-include $(OBJS:.o=.d) $(patsubst %,%.d,$(UNIT_BINS))
