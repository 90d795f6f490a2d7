# Test helper programs (included by the top Makefile).

# foldcheck validates wprof's output with the writer's own strict parser.
FOLDCHECK_OBJS := $(OUT)/obj/folded.o $(OUT)/obj/safestr.o
$(OUT)/tests/tools/foldcheck: tests/tools/foldcheck.c $(FOLDCHECK_OBJS) src/folded.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $< $(FOLDCHECK_OBJS) -o $@

TEST_FIXTURES += $(OUT)/tests/tools/foldcheck

# exchange swaps two names as fast as it can (hostile_output.sh's other user).
$(OUT)/tests/tools/exchange: tests/tools/exchange.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $< -o $@

TEST_FIXTURES += $(OUT)/tests/tools/exchange
