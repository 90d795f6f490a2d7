# SPDX-License-Identifier: GPL-2.0-only
# Fixtures of tests/unit/test_symbolize.c, in $(OUT)/tests/fixtures:
#   wpfix                     PIE linked to libwpfix.so (rpath $ORIGIN)
#   wpfix-nopie               the same program as a non-PIE (ET_EXEC) executable
#   libwpfix.so               exported, static, compiler-cloned, versioned functions
#   libwpfix-stripped.so      a build without .symtab: only .dynsym names remain
#   libwpfix-twin.so          libwpfix.so stripped: same build-id, named through it
#   libwpfix-debuglink.so     a build without .symtab whose symbols are in a separate
#   libwpfix-debuglink.debug  debug file named by .gnu_debuglink
#   libwpfix-buildid.so       a build without .symtab whose debug file is only found by
#   debug/.build-id/57/...    build-id, under a debug directory the test names
#   libwpfix-crc.so           no build-id: its .gnu_debuglink file is checked by CRC
#   libwpfix-crc.debug        (the matching case)
#   libwpfix-crcbad.so        no build-id, and libwpfix-crcbad.debug is the debug file of
#   libwpfix-crcbad.debug     another build (-DWPFIX_OTHER_BUILD): its CRC differs
#   libwpfix-bidbad.so        a build-id, and libwpfix-bidbad.debug, named by its
#   libwpfix-bidbad.debug     .gnu_debuglink, is another build's with another build-id
#   wpcxx                     C++: namespaces, a class, a template, an inlined method
#   wpjit                     an anonymous executable region named by a perf map
#   libwpplt*.so              PLT stubs of each layout, for tests/unit/test_sectsyms.c
# Each stripped build has a build-id of its own: the symbolizer shares one index
# between files of one build-id, which would name them through libwpfix.so.
# -O2 so that GCC makes the .constprop clones whose names are checked.
# And the symbolization benchmark tests/tools/symbench with its fixtures:
#   libsb0.so .. libsb19.so   50 functions each, one source built 20 times
#   sbdriver                  dlopen()s them all, prints their addresses, sleeps

FIX_DIR     := $(OUT)/tests/fixtures
FIX_CFLAGS  := -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror
FIX_STRIP   ?= strip
FIX_OBJCOPY ?= objcopy
FIX_LIB     = $(CC) $(FIX_CFLAGS) -fPIC -shared -Wl,-soname,libwpfix.so \
	-Wl,--version-script=tests/fixtures/wpfix_lib.map
FIX_LIB_SRC := tests/fixtures/wpfix_lib.c tests/fixtures/wpfix.h tests/fixtures/wpfix_lib.map
# Build-ids of the stripped builds: 20 bytes, like a SHA-1 one.
FIX_BID_STRIPPED  := 5770666978000000000000000000000000000001
FIX_BID_DEBUGLINK := 5770666978000000000000000000000000000002
FIX_BID_BUILDID   := 5770666978000000000000000000000000000003
FIX_BID_BIDBAD    := 5770666978000000000000000000000000000004
FIX_BID_OTHER     := 5770666978000000000000000000000000000005
FIX_BID_DEBUG     := $(FIX_DIR)/debug/.build-id/$(shell echo $(FIX_BID_BUILDID) | cut -c1-2)/$(shell echo $(FIX_BID_BUILDID) | cut -c3-).debug

$(FIX_DIR)/libwpfix.so: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) $< -o $@

$(FIX_DIR)/libwpfix-stripped.so: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -Wl,--build-id=0x$(FIX_BID_STRIPPED) $< -o $@.tmp
	$(Q)$(FIX_STRIP) --strip-all -o $@ $@.tmp && rm -f $@.tmp

$(FIX_DIR)/libwpfix-twin.so: $(FIX_DIR)/libwpfix.so
	$(call msg,STRIP,$@)
	$(Q)$(FIX_STRIP) --strip-all -o $@ $<

$(FIX_DIR)/libwpfix-debuglink.full: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -Wl,--build-id=0x$(FIX_BID_DEBUGLINK) $< -o $@

$(FIX_DIR)/libwpfix-debuglink.debug: $(FIX_DIR)/libwpfix-debuglink.full
	$(call msg,OBJCOPY,$@)
	$(Q)$(FIX_OBJCOPY) --only-keep-debug $< $@

# The link is by file name, looked up next to the library (libdw's default path).
$(FIX_DIR)/libwpfix-debuglink.so: $(FIX_DIR)/libwpfix-debuglink.full $(FIX_DIR)/libwpfix-debuglink.debug
	$(call msg,STRIP,$@)
	$(Q)$(FIX_STRIP) --strip-all -o $@.tmp $<
	$(Q)cd $(@D) && $(FIX_OBJCOPY) --add-gnu-debuglink=libwpfix-debuglink.debug \
		$(@F).tmp $(@F) && rm -f $(@F).tmp

$(FIX_DIR)/libwpfix-buildid.full: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -Wl,--build-id=0x$(FIX_BID_BUILDID) $< -o $@

$(FIX_BID_DEBUG): $(FIX_DIR)/libwpfix-buildid.full
	$(call msg,OBJCOPY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_OBJCOPY) --only-keep-debug $< $@

# No .gnu_debuglink: only the build-id leads to the debug file.
$(FIX_DIR)/libwpfix-buildid.so: $(FIX_DIR)/libwpfix-buildid.full
	$(call msg,STRIP,$@)
	$(Q)$(FIX_STRIP) --strip-all -o $@ $<

# fix_debuglink_pair OWN_FULL OTHER_FULL STRIPPED DEBUG: strip OWN_FULL into
# STRIPPED with a .gnu_debuglink to DEBUG (by name, with the CRC of OWN_FULL's
# debug file), then put OTHER_FULL's debug file there instead (when OTHER_FULL
# is OWN_FULL, the link is right).
define fix_debuglink_pair
	$(Q)mkdir -p $(3).d
	$(Q)$(FIX_OBJCOPY) --only-keep-debug $(1) $(3).d/$(notdir $(4))
	$(Q)$(FIX_STRIP) --strip-all -o $(3).tmp $(1)
	$(Q)$(FIX_OBJCOPY) --add-gnu-debuglink=$(3).d/$(notdir $(4)) $(3).tmp $(3)
	$(Q)$(FIX_OBJCOPY) --only-keep-debug $(2) $(4)
	$(Q)rm -rf $(3).tmp $(3).d
endef

$(FIX_DIR)/libwpfix-nobid.full: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -Wl,--build-id=none $< -o $@

$(FIX_DIR)/libwpfix-nobid-other.full: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -DWPFIX_OTHER_BUILD -Wl,--build-id=none $< -o $@

$(FIX_DIR)/libwpfix-bidbad.full: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -Wl,--build-id=0x$(FIX_BID_BIDBAD) $< -o $@

$(FIX_DIR)/libwpfix-other.full: $(FIX_LIB_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FIX_LIB) -DWPFIX_OTHER_BUILD -Wl,--build-id=0x$(FIX_BID_OTHER) $< -o $@

# One rule makes both files of each pair: the .debug is a by-product.
$(FIX_DIR)/libwpfix-crc.so: $(FIX_DIR)/libwpfix-nobid.full
	$(call msg,STRIP,$@)
	$(call fix_debuglink_pair,$<,$<,$@,$(FIX_DIR)/libwpfix-crc.debug)

$(FIX_DIR)/libwpfix-crcbad.so: $(FIX_DIR)/libwpfix-nobid.full $(FIX_DIR)/libwpfix-nobid-other.full
	$(call msg,STRIP,$@)
	$(call fix_debuglink_pair,$<,$(word 2,$^),$@,$(FIX_DIR)/libwpfix-crcbad.debug)

$(FIX_DIR)/libwpfix-bidbad.so: $(FIX_DIR)/libwpfix-bidbad.full $(FIX_DIR)/libwpfix-other.full
	$(call msg,STRIP,$@)
	$(call fix_debuglink_pair,$<,$(word 2,$^),$@,$(FIX_DIR)/libwpfix-bidbad.debug)

$(FIX_DIR)/wpfix: tests/fixtures/wpfix_main.c tests/fixtures/wpfix.h $(FIX_DIR)/libwpfix.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIE -pie $< -o $@ -L$(FIX_DIR) -lwpfix -Wl,-rpath,'$$ORIGIN' -ldl

$(FIX_DIR)/wpfix-nopie: tests/fixtures/wpfix_main.c tests/fixtures/wpfix.h $(FIX_DIR)/libwpfix.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fno-pie -no-pie $< -o $@ -L$(FIX_DIR) -lwpfix \
		-Wl,-rpath,'$$ORIGIN' -ldl

$(FIX_DIR)/wpcxx: tests/fixtures/wpcxx.cpp
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@

$(FIX_DIR)/wpjit: tests/fixtures/wpjit.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) $< -o $@

# PLT stubs of each layout (tests/unit/test_sectsyms.c): lazy .plt with 8-byte
# .plt.got stubs, and IBT's .plt.sec with 16-byte ones; stripped, as most
# libraries are.
$(FIX_DIR)/libwpplt.so: tests/fixtures/wpplt.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared -s $< -o $@

$(FIX_DIR)/libwpplt-ibt.so: tests/fixtures/wpplt.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared -s -fcf-protection -Wl,-z,ibtplt $< -o $@

PLT_FIXTURES := $(addprefix $(FIX_DIR)/,libwpplt.so libwpplt-ibt.so)
$(OUT)/tests/test_sectsyms: | $(PLT_FIXTURES)
TEST_FIXTURES += $(PLT_FIXTURES)

SYMBOLIZE_FIXTURES := $(addprefix $(FIX_DIR)/,wpfix wpfix-nopie libwpfix.so \
	libwpfix-stripped.so libwpfix-debuglink.so libwpfix-debuglink.debug \
	libwpfix-buildid.so libwpfix-twin.so libwpfix-crc.so libwpfix-crcbad.so \
	libwpfix-bidbad.so libwpfix-other.full wpcxx wpjit) $(FIX_BID_DEBUG)

# The benchmark: 20 libraries from one source, a driver, the timing tool.
SB_LIBS := $(foreach n,$(shell seq 0 19),$(FIX_DIR)/libsb$(n).so)

$(FIX_DIR)/libsb%.so: tests/fixtures/sblib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared -DLIBN=$* $< -o $@

$(FIX_DIR)/sbdriver: tests/fixtures/sbdriver.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) $< -o $@ -ldl

$(OUT)/tests/tools/symbench: tests/tools/symbench.c $(LIB_OBJS) | $(SB_LIBS) $(FIX_DIR)/sbdriver
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

TEST_FIXTURES += $(SYMBOLIZE_FIXTURES) $(SB_LIBS) $(FIX_DIR)/sbdriver $(OUT)/tests/tools/symbench

# So that building a test alone also builds what it runs.
$(OUT)/tests/test_symbolize: | $(SYMBOLIZE_FIXTURES) $(SB_LIBS) $(FIX_DIR)/sbdriver
$(OUT)/tests/test_demangle $(OUT)/tests/test_symns $(OUT)/tests/test_debuginfod: | $(SYMBOLIZE_FIXTURES)
