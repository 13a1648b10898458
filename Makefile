# uopdb - build, test, bench, install.
#   make            build the uopdb binary and the Lua module
#   make run        start the REPL (SAMPLE=file.lua runs a sample, then the REPL)
#   make test       build and run every test (unit, Lua, REPL)
#   make test-san   the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      benchmarks, printed as a table
#   make deps       install missing Debian packages
#   make fuzz-symbolic N=1000000   the symbolic engine's random checker
#   make fuzz-pipeline N=1000 SEED=1   random tensor programs, compiled, run and validated
#   make fuzz-text FUZZ_SECONDS=600     the parsers' libFuzzer harnesses (clang), each that long
#   make fuzz-api FUZZ_CALLS=1000000    every uop/Tensor/program/kernel function, random hostile arguments
#   make install    PREFIX=/usr/local
#   make docs       regenerate the stage table in docs/ARCHITECTURE.md from the rows that run
SHELL := /bin/bash
PREFIX ?= /usr/local
SAN ?= 0

ifeq ($(SAN),1)
  BUILD ?= build-san
  OPT := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=undefined,float-cast-overflow
  LDSAN := -fsanitize=address,undefined,float-cast-overflow
else
  BUILD ?= build
  OPT := -O2 -g
  LDSAN :=
endif

# Packages first, flags after.  The flags below come from pkg-config and
# llvm-config-19, which the deps step installs on a fresh machine, so they are
# recursive (=) variables, computed when a recipe uses them, never when this
# file is read; every rule whose recipe uses them has deps as an order-only
# prerequisite (| deps), so deps runs before the first compile or link.
# Keep it so: a := here would break the README's first command.
# DEPS_SCRIPT replaces scripts/deps.sh (tests/setup/run.sh uses a fake one).
DEPS_SCRIPT ?= scripts/deps.sh
CC ?= cc
LLVM_CONFIG ?= llvm-config-19
# $(call need,TOOL): nothing, or stop with one line if TOOL is not on PATH
need = $(if $(shell command -v $1 2>/dev/null),,$(error $1 not found: run `make deps` to install the Debian packages))
LUA_CFLAGS = $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIBS = $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
# LLVM (the backend): only the include path, so LLVM's own -std/-O flags stay out
LLVM_CFLAGS = $(call need,$(LLVM_CONFIG))-I$(shell $(LLVM_CONFIG) --includedir)
LLVM_LIBS = $(call need,$(LLVM_CONFIG))$(shell $(LLVM_CONFIG) --ldflags --libs)
CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -fPIC $(OPT) $(LUA_CFLAGS) -I. $(LLVM_CFLAGS)
LDLIBS = $(LUA_LIBS) -lm -lpthread $(LLVM_LIBS)

CORE_SRC := $(sort $(wildcard core/*/*.c))
VIZ_SRC := $(sort $(wildcard viz/*.c))
SCRIPT_SRC := $(sort $(wildcard scripting/*.c))
REPL_SRC := $(sort $(wildcard repl/*.c))
LUA_EMBED := $(sort $(wildcard scripting/*.lua))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o) $(VIZ_SRC:%.c=$(BUILD)/%.o)
SCRIPT_OBJ := $(SCRIPT_SRC:%.c=$(BUILD)/%.o) $(LUA_EMBED:scripting/%.lua=$(BUILD)/gen/%_lua.o)
REPL_OBJ := $(REPL_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all run test test-san bench deps install docs clean fuzz-symbolic fuzz-pipeline
all: $(BUILD)/uopdb $(BUILD)/uopdb.so

deps:
	@$(DEPS_SCRIPT)

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/%_lua.c: scripting/%.lua scripts/embed.sh
	@mkdir -p $(dir $@)
	scripts/embed.sh $< $@ uopdb_lua_$*

$(BUILD)/gen/%_lua.o: $(BUILD)/gen/%_lua.c | deps
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libuopdb.a: $(CORE_OBJ) $(SCRIPT_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/uopdb: $(REPL_OBJ) $(BUILD)/libuopdb.a | deps
	$(CC) $(LDSAN) -o $@ $(REPL_OBJ) $(BUILD)/libuopdb.a $(LDLIBS) -ledit

# the module a stock lua5.4 loads with require "uopdb" (Lua symbols come from the host)
$(BUILD)/uopdb.so: $(CORE_OBJ) $(SCRIPT_OBJ) | deps
	$(CC) $(LDSAN) -shared -o $@ $^ $(LLVM_LIBS) -lm -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libuopdb.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libuopdb.a $(LDSAN) $(LDLIBS) -lcmocka

run: all
	@if [ -n "$(SAMPLE)" ]; then $(BUILD)/uopdb -i $(SAMPLE); else $(BUILD)/uopdb; fi

test: all $(UNIT_BIN)
	@tests/run_all.sh $(BUILD)

test-san:
	@UOPDB_FUZZ_PROGRAMS=$${UOPDB_FUZZ_PROGRAMS:-40} $(MAKE) --no-print-directory test SAN=1

$(BUILD)/bench: tests/bench/bench.c $(BUILD)/libuopdb.a | deps
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libuopdb.a $(LDSAN) $(LDLIBS)

bench:
	@$(MAKE) --no-print-directory $(BUILD)/bench SAN=0
	@$(MAKE) --no-print-directory $(BUILD)/uopdb SAN=0
	@$(BUILD)/bench
	@$(BUILD)/uopdb tests/bench/sym_lua.lua simplify
	@$(BUILD)/uopdb tests/bench/sym_lua.lua trace
	@$(BUILD)/uopdb tests/bench/kernels.lua
	@$(BUILD)/uopdb tests/bench/memory.lua

# the random-expression checker of the symbolic engine, by hand: make fuzz-symbolic N=1000000 SEED=1
N ?= 100000
SEED ?= 1
$(BUILD)/fuzz_symbolic: tests/fuzz/fuzz_symbolic.c $(BUILD)/libuopdb.a | deps
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libuopdb.a $(LDSAN) $(LDLIBS)

fuzz-symbolic:
	@$(MAKE) --no-print-directory $(BUILD)/fuzz_symbolic
	@$(BUILD)/fuzz_symbolic $(N) $(SEED)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/lua/5.4
	install -m 755 $(BUILD)/uopdb $(DESTDIR)$(PREFIX)/bin/uopdb
	install -m 644 $(BUILD)/uopdb.so $(DESTDIR)$(PREFIX)/lib/lua/5.4/uopdb.so

docs: $(BUILD)/uopdb
	@scripts/update_docs.sh $(BUILD)

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# the random checker of whole tensor programs, by hand: make fuzz-pipeline N=1000 SEED=1
fuzz-pipeline:
	@$(MAKE) --no-print-directory $(BUILD)/uopdb
	@UOPDB_VERIFY=$${UOPDB_VERIFY:-1} $(BUILD)/uopdb tests/fuzz/fuzz_pipeline.lua $(if $(filter command line,$(origin N)),$(N),1000) $(SEED)

# ---- libFuzzer harnesses of the text parsers (tests/fuzz/fuzz_<name>.c) ----
# Built with clang into build-fuzz/: the parsers and what they use (util, ir,
# rewrite, the listing and the tinygrad repr) with coverage, ASan and UBSan.
#   make fuzz-text [FUZZ_SECONDS=600] [FUZZ_TARGETS="listing arg"]  each parser that long, by hand
#   make fuzz-api [FUZZ_CALLS=1000000 | FUZZ_SECONDS=600] [SEED=1] [SAN=1]   the Lua API fuzzer
# Findings go to build-fuzz/findings/ (libFuzzer's crash files) and
# build-fuzz/api/finding-<k>.lua (shrunk Lua snippets).
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_TEXT_TARGETS := listing tinygrad_repr rules arg
FUZZ_TARGETS ?= $(FUZZ_TEXT_TARGETS)
FUZZ_SECONDS ?= 600
FUZZ_FLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -O1 -g -I. \
  -fno-omit-frame-pointer -fno-sanitize-recover=undefined
FUZZ_SRC := $(sort $(wildcard core/util/*.c core/ir/*.c core/rewrite/*.c)) viz/listing.c viz/tinygrad_repr.c
FUZZ_OBJ := $(FUZZ_SRC:%.c=$(FUZZ_BUILD)/%.o)

$(FUZZ_BUILD)/%.o: %.c
	@$(call need,$(FUZZ_CC))mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_text.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_OBJ) -lm -lpthread

.PHONY: fuzz-text fuzz-api fuzz-build
fuzz-build: $(FUZZ_TEXT_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

fuzz-text: fuzz-build
	@tests/fuzz/run_text.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# the Lua API fuzzer: FUZZ_CALLS calls, or FUZZ_SECONDS when given on the command
# line; SAN=1 runs it under the sanitizers (build-san/uopdb).  Every kernel it
# compiles is checked against the spec after every stage (UOPDB_VERIFY=1)
FUZZ_CALLS ?= 1000000
fuzz-api: $(BUILD)/uopdb
	@UOPDB_VERIFY=$${UOPDB_VERIFY:-1} $(BUILD)/uopdb tests/fuzz/fuzz_api.lua --uopdb $(BUILD)/uopdb --out $(FUZZ_BUILD)/api --seed $(SEED) \
	  $(if $(filter command line environment,$(origin FUZZ_SECONDS)),--seconds $(FUZZ_SECONDS),--calls $(FUZZ_CALLS))

-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
