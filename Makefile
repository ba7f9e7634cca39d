# objscope - one Makefile. Quiet unless V=1; objects in build/.
# Respects CC, CFLAGS, LDFLAGS, EXTRA_CFLAGS. `make help` lists targets.

CC      ?= gcc
CFLAGS  ?= -O2 -g
BUILD   ?= build
Q       := $(if $(V),,@)

WARN     := -Wall -Wextra -Werror
ALL_CFLAGS = -std=gnu11 $(WARN) -fPIC -fvisibility=hidden -D_GNU_SOURCE -I. $(CFLAGS) $(EXTRA_CFLAGS)
TOOL_LIBS := -lcapstone -ldw -lelf -ljson-c -lz -lstdc++ -lpthread -lm
PRELOAD_LIBS := -lunwind -ldl -lpthread

COMMON_SRC   := $(wildcard common/*.c)
PRELOAD_SRC  := $(wildcard preload/*.c)
ATTACHER_SRC := $(filter-out attacher/main.c,$(wildcard attacher/*.c))
SYM_SRC      := $(wildcard symbolizer/*.c)
REPORT_SRC   := $(wildcard report/*.c)
UNIT_SRC     := $(wildcard tests/unit/*.c)
E2E_SRC      := $(wildcard tests/e2e/*.c)
FIXTURE_SRC  := $(wildcard tests/fixtures/*.c)
BENCH_SRC    := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

TOOL_OBJ    := $(call obj,$(COMMON_SRC) $(ATTACHER_SRC) $(SYM_SRC) $(REPORT_SRC))
PRELOAD_OBJ := $(call obj,$(PRELOAD_SRC))
TOOL_LIB    := $(BUILD)/libobjscope-tool.a
OBJSCOPE    := $(BUILD)/objscope
PRELOAD_SO  := $(BUILD)/libobjscope.so
FIXTURES    := $(patsubst tests/fixtures/%.c,$(BUILD)/fixtures/%,$(FIXTURE_SRC))
BENCHES     := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
DEPS_STAMP  := $(BUILD)/.deps-ok

.PHONY: all deps demo test unit e2e bench fixtures clean help
all: $(OBJSCOPE) $(PRELOAD_SO)

help:
	@echo "make            build build/objscope and build/libobjscope.so"
	@echo "make demo       install missing Debian packages, build, profile the bundled demo"
	@echo "make test       install missing Debian packages, build, run unit + end-to-end tests"
	@echo "make bench      run the benchmarks (results: docs/BENCHMARKS.md)"

# Installs missing Debian packages (needs root on a fresh machine).
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	$(Q)sh scripts/install-deps.sh
	$(Q)mkdir -p $(@D) && touch $@

$(BUILD)/obj/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(TOOL_LIB): $(TOOL_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OBJSCOPE): $(call obj,attacher/main.c) $(TOOL_LIB) $(PRELOAD_SO)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(call obj,attacher/main.c) $(TOOL_LIB) $(TOOL_LIBS)

# The preload library: only the hooks are exported (-fvisibility=hidden).
$(PRELOAD_SO): $(PRELOAD_OBJ)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-z,now -o $@ $^ $(PRELOAD_LIBS)

# Fixtures: -O2 without frame pointers on purpose (libunwind must cope).
$(BUILD)/fixtures/%: tests/fixtures/%.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FIXTURE $@")
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread -lm

# Shared-library fixture of the symbolizer tests, C and C++ sources (gcc
# picks the language by extension); the unit tests need it and sym_target.
# Linked at vaddr 0x240000 so that segment vaddrs differ from file offsets.
SYMLIB_SRC := $(wildcard tests/fixtures/symlib/*.c tests/fixtures/symlib/*.cpp)
SYMLIB_SO  := $(BUILD)/fixtures/libsymlib.so
FIXTURES   += $(SYMLIB_SO)
$(SYMLIB_SO): $(SYMLIB_SRC) $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FIXTURE $@")
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,-Ttext-segment=0x240000 $(WARN) -o $@ $(SYMLIB_SRC)
$(BUILD)/test_unit: | $(SYMLIB_SO) $(BUILD)/fixtures/sym_target

fixtures: $(FIXTURES)

$(BUILD)/test_unit: $(call obj,$(UNIT_SRC)) $(TOOL_LIB)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(TOOL_LIBS) -lcriterion

$(BUILD)/test_e2e: $(call obj,$(E2E_SRC)) $(TOOL_LIB)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(TOOL_LIBS) -lcriterion

$(BUILD)/bench/%: bench/%.c $(TOOL_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(TOOL_LIB) $(TOOL_LIBS)

# The preload's recording path, linked without its hooks, under a malloc
# that counts calls (proves "no malloc in hooks").
NOMALLOC_OBJ := $(call obj,tests/nomalloc/test_nomalloc.c preload/init.c preload/fallback.c \
		preload/thread.c preload/record.c)
$(BUILD)/test_nomalloc: $(NOMALLOC_OBJ)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -rdynamic -o $@ $^ $(PRELOAD_LIBS) -lcriterion

unit: $(BUILD)/test_unit $(BUILD)/test_nomalloc $(FIXTURES) $(PRELOAD_SO)
	$(BUILD)/test_unit --jobs 1
	$(BUILD)/test_nomalloc --jobs 1

e2e: $(BUILD)/test_e2e all $(FIXTURES)
	$(BUILD)/test_e2e --jobs 1

test: deps
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory e2e

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/fixtures/demo
	$(BUILD)/objscope record -o $(BUILD)/demo.data -- $(BUILD)/fixtures/demo
	$(BUILD)/objscope report $(BUILD)/demo.data

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCHES) $(FIXTURES)
	sh bench/run.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
