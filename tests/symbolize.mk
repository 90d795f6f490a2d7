# SPDX-License-Identifier: GPL-2.0-only
# Fixtures of tests/unit/test_symbolize.c, in $(OUT)/tests/fixtures:
#   wpfix                     PIE linked to libwpfix.so (rpath $ORIGIN)
#   wpfix-nopie               the same program as a non-PIE (ET_EXEC) executable
#   libwpfix.so               exported, static and compiler-cloned functions
#   libwpfix-stripped.so      copy without .symtab: only .dynsym names remain
#   libwpfix-debuglink.so     copy without .symtab whose symbols are in a separate
#   libwpfix-debuglink.debug  debug file named by .gnu_debuglink
# -O2 so that GCC makes the .constprop clones whose names are checked.

FIX_DIR     := $(OUT)/tests/fixtures
FIX_CFLAGS  := -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror
FIX_STRIP   ?= strip
FIX_OBJCOPY ?= objcopy

$(FIX_DIR)/libwpfix.so: tests/fixtures/wpfix_lib.c tests/fixtures/wpfix.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIC -shared -Wl,-soname,libwpfix.so $< -o $@

$(FIX_DIR)/libwpfix-stripped.so: $(FIX_DIR)/libwpfix.so
	$(call msg,STRIP,$@)
	$(Q)$(FIX_STRIP) --strip-all -o $@ $<

$(FIX_DIR)/libwpfix-debuglink.debug: $(FIX_DIR)/libwpfix.so
	$(call msg,OBJCOPY,$@)
	$(Q)$(FIX_OBJCOPY) --only-keep-debug $< $@

# The link is by file name, looked up next to the library (libdw's default path).
$(FIX_DIR)/libwpfix-debuglink.so: $(FIX_DIR)/libwpfix.so $(FIX_DIR)/libwpfix-debuglink.debug
	$(call msg,STRIP,$@)
	$(Q)$(FIX_STRIP) --strip-all -o $@.tmp $<
	$(Q)cd $(@D) && $(FIX_OBJCOPY) --add-gnu-debuglink=libwpfix-debuglink.debug \
		$(@F).tmp $(@F) && rm -f $(@F).tmp

$(FIX_DIR)/wpfix: tests/fixtures/wpfix_main.c tests/fixtures/wpfix.h $(FIX_DIR)/libwpfix.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fPIE -pie $< -o $@ -L$(FIX_DIR) -lwpfix -Wl,-rpath,'$$ORIGIN' -ldl

$(FIX_DIR)/wpfix-nopie: tests/fixtures/wpfix_main.c tests/fixtures/wpfix.h $(FIX_DIR)/libwpfix.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIX_CFLAGS) -fno-pie -no-pie $< -o $@ -L$(FIX_DIR) -lwpfix \
		-Wl,-rpath,'$$ORIGIN' -ldl

SYMBOLIZE_FIXTURES := $(addprefix $(FIX_DIR)/,wpfix wpfix-nopie libwpfix.so \
	libwpfix-stripped.so libwpfix-debuglink.so libwpfix-debuglink.debug)
TEST_FIXTURES += $(SYMBOLIZE_FIXTURES)

# So that building the test alone also builds what it runs.
$(OUT)/tests/test_symbolize: | $(SYMBOLIZE_FIXTURES)
