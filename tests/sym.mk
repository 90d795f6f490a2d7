# SPDX-License-Identifier: GPL-2.0-only
# Workloads of the symbolization integration tests (tests/integration/sym_*.sh)
# that need more than the plain workload rule:
#   workloads/sym_inline        -O2 (not -fno-inline): always_inline helpers
#   workloads/sym_cxx           C++, built with $(CXX)
#   sym/call/sym_call           PIE linked to sym/call/libsymcall.so (rpath
#   sym/call/libsymcall.so      $ORIGIN), both with their symbols
#   sym/debuglink/sym_call      the same pair stripped of every symbol (only
#   sym/debuglink/libsymcall.so .dynsym is left), their debug files named by
#   sym/debuglink/sym_call.debug          .gnu_debuglink: the program's next to
#   sym/debuglink/.debug/libsymcall.so.debug   it, the library's in .debug/
#   sym/stripped/sleepburn      workloads/sleepburn stripped of every symbol,
#                               with no debug file: nothing can name its code
# All under $(OUT)/tests. The debuglink pair gets build-ids of its own, so no
# lookup by build-id can reach the unstripped pair's symbols.

SYM_DIR      := $(OUT)/tests/sym
SYM_CFLAGS   := -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -Wall -Wextra -Werror
SYM_STRIP    ?= strip
SYM_OBJCOPY  ?= objcopy
SYM_CALL_SRC := tests/workloads/sym_call.c
# 20 bytes, like a SHA-1 build-id; "sym" in ASCII to tell them apart
SYM_BID_EXE  := 73796d0000000000000000000000000000000001
SYM_BID_LIB  := 73796d0000000000000000000000000000000002

# Explicit rules win over the workloads' pattern rule for the same target.
$(OUT)/tests/workloads/sym_inline: tests/workloads/sym_inline.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror $< -o $@

$(OUT)/tests/workloads/sym_cxx: tests/workloads/sym_cxx.cpp
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -Wall -Wextra -Werror \
		$< -o $@

$(SYM_DIR)/call/libsymcall.so: $(SYM_CALL_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SYM_CFLAGS) -DSYM_CALL_LIB -fPIC -shared -Wl,-soname,libsymcall.so $< -o $@

$(SYM_DIR)/call/sym_call: $(SYM_CALL_SRC) $(SYM_DIR)/call/libsymcall.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYM_CFLAGS) -DSYM_CALL_EXE -fPIE -pie $< -o $@ \
		-L$(@D) -lsymcall -Wl,-rpath,'$$ORIGIN'

# Unstripped builds of the debuglink pair, kept apart from the stripped ones.
$(SYM_DIR)/full/libsymcall.so: $(SYM_CALL_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SYM_CFLAGS) -DSYM_CALL_LIB -fPIC -shared -Wl,-soname,libsymcall.so \
		-Wl,--build-id=0x$(SYM_BID_LIB) $< -o $@

$(SYM_DIR)/full/sym_call: $(SYM_CALL_SRC) $(SYM_DIR)/full/libsymcall.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYM_CFLAGS) -DSYM_CALL_EXE -fPIE -pie -Wl,--build-id=0x$(SYM_BID_EXE) $< -o $@ \
		-L$(@D) -lsymcall -Wl,-rpath,'$$ORIGIN'

# sym_debuglink FULL STRIPPED DEBUG: strip FULL of everything into
# STRIPPED, its DWARF and .symtab into DEBUG; STRIPPED names DEBUG by file
# name (objcopy stores the base name and its CRC).
define sym_debuglink
	$(Q)mkdir -p $(dir $(2)) $(dir $(3))
	$(Q)$(SYM_OBJCOPY) --only-keep-debug $(1) $(3)
	$(Q)$(SYM_STRIP) --strip-all -o $(2).tmp $(1)
	$(Q)$(SYM_OBJCOPY) --add-gnu-debuglink=$(3) $(2).tmp $(2)
	$(Q)rm -f $(2).tmp
endef

$(SYM_DIR)/debuglink/sym_call: $(SYM_DIR)/full/sym_call
	$(call msg,STRIP,$@)
	$(call sym_debuglink,$<,$@,$(SYM_DIR)/debuglink/sym_call.debug)

$(SYM_DIR)/debuglink/libsymcall.so: $(SYM_DIR)/full/libsymcall.so
	$(call msg,STRIP,$@)
	$(call sym_debuglink,$<,$@,$(SYM_DIR)/debuglink/.debug/libsymcall.so.debug)

# A build-id of its own, too: the unstripped sleepburn's would find its symbols.
$(SYM_DIR)/stripped/sleepburn: $(OUT)/tests/workloads/sleepburn
	$(call msg,STRIP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(SYM_STRIP) --strip-all --remove-section=.note.gnu.build-id -o $@ $<

SYM_TARGETS := $(OUT)/tests/workloads/sym_inline $(OUT)/tests/workloads/sym_cxx \
	$(SYM_DIR)/stripped/sleepburn \
	$(SYM_DIR)/call/sym_call $(SYM_DIR)/call/libsymcall.so \
	$(SYM_DIR)/debuglink/sym_call $(SYM_DIR)/debuglink/libsymcall.so

TEST_FIXTURES += $(SYM_TARGETS)

.PHONY: sym-bins
sym-bins: $(SYM_TARGETS) $(OUT)/tests/workloads/sym_libc $(OUT)/tests/workloads/sym_call
