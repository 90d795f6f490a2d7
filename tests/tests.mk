# Test helper programs (included by the top Makefile).

# foldcheck validates wprof's output with the writer's own strict parser.
$(OUT)/tests/tools/foldcheck: tests/tools/foldcheck.c $(OUT)/obj/folded.o src/folded.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $< $(OUT)/obj/folded.o -o $@

TEST_FIXTURES += $(OUT)/tests/tools/foldcheck

# exchange swaps two names as fast as it can (hostile_output.sh's other user).
$(OUT)/tests/tools/exchange: tests/tools/exchange.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $< -o $@

TEST_FIXTURES += $(OUT)/tests/tools/exchange
