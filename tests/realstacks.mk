# SPDX-License-Identifier: GPL-2.0-only
# Programs of the real-program tests (tests/integration/real_*.sh):
#   workloads/condwait-nofp   tests/workloads/condwait.c without frame
#                             pointers, -O2 (the pattern rule builds
#                             workloads/condwait with them)
#   fixtures/gohttp           tests/fixtures/gohttp, a net/http server, built
#                             by go with its cache under $(OUT)/go; it imports
#                             the standard library only, and GOPROXY=off makes
#                             sure nothing is fetched
# gohttp is built only where go is installed; real_go.sh and
# real_schedstat.sh say so when it is missing.

GO ?= go
GO_DIR := $(abspath $(OUT))/go

$(OUT)/tests/workloads/condwait-nofp: tests/workloads/condwait.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra -Werror $< -o $@

# GO111MODULE=off: one main package of its own, no go.mod. cgo stays on
# (go's default where gcc is installed): net then links libc, as most Go
# servers on Debian do.
$(OUT)/tests/fixtures/gohttp: tests/fixtures/gohttp/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D) $(GO_DIR)/cache $(GO_DIR)/path
	$(Q)cd tests/fixtures/gohttp && env GOCACHE=$(GO_DIR)/cache GOPATH=$(GO_DIR)/path \
		GO111MODULE=off GOPROXY=off GOFLAGS= CGO_ENABLED=1 \
		$(GO) build -o $(abspath $@) .

TEST_FIXTURES += $(OUT)/tests/workloads/condwait-nofp
ifneq ($(shell command -v $(GO) 2>/dev/null),)
TEST_FIXTURES += $(OUT)/tests/fixtures/gohttp
endif
