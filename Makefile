# pylayer2static — build, test, demo, bench, install.
# `make check` sets everything up (Debian packages, the pinned grammar, both Paddle venvs) and
# runs every suite; `make demo` sets up and runs the request's example end to end.

CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
override CFLAGS += -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE $(WARNINGS) -MMD -MP
LDLIBS := -ltree-sitter -lcjson -lpthread
PYTHON ?= python3
PREFIX ?= /usr/local

SANITIZE ?=
ifneq ($(SANITIZE),)
BUILD ?= build/sanitize
override CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=$(SANITIZE)
else
BUILD ?= build
endif

GRAMMAR_PIN := grammar/tree-sitter-python.pin
GRAMMAR_VERSION := $(shell sed -n 's/^version=//p' $(GRAMMAR_PIN))
GRAMMAR_SRC := build/grammar
DEPS_STAMP := build/.deps-ok

SRC := $(wildcard src/*.c)
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out src/main.c,$(SRC))) \
           $(BUILD)/obj/rules_data.o $(BUILD)/obj/grammar_parser.o $(BUILD)/obj/grammar_scanner.o
BIN := $(BUILD)/pylayer2static
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

.DELETE_ON_ERROR:
.PHONY: all deps venv check unit golden cli e2e demo bench bench-doc install clean

all: $(BIN)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/deps.sh
	sh scripts/deps.sh
	@mkdir -p $(dir $@) && touch $@

$(GRAMMAR_SRC)/parser.c: $(GRAMMAR_PIN) grammar/fetch.sh
	sh grammar/fetch.sh $(GRAMMAR_PIN) $(GRAMMAR_SRC)
	@touch $@
$(GRAMMAR_SRC)/scanner.c: $(GRAMMAR_SRC)/parser.c

# Third-party grammar code: its own warnings are not ours to fix. It shares our allocator.
$(BUILD)/obj/grammar_%.o: $(GRAMMAR_SRC)/%.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=c11 -w -DTREE_SITTER_REUSE_ALLOCATOR -I$(GRAMMAR_SRC) $(filter -fsanitize=%,$(CFLAGS)) -c $< -o $@

$(BUILD)/gen/rules_data.c: rules/paddle.json $(BUILD)/tools/embed
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed p2s_default_rules_json $< $@

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 $(WARNINGS) $< -o $@

$(BUILD)/obj/rules_data.o: $(BUILD)/gen/rules_data.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: src/%.c $(DEPS_STAMP) $(GRAMMAR_SRC)/parser.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DP2S_GRAMMAR_VERSION='"$(GRAMMAR_VERSION)"' -c $< -o $@

$(BIN): $(BUILD)/obj/main.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/test_%: tests/unit/test_%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -DP2S_GRAMMAR_VERSION='"$(GRAMMAR_VERSION)"' $(LDFLAGS) $< $(LIB_OBJ) $(LDLIBS) -lcmocka -o $@

venv: .venv/.p2s-ready .venv-2.6/.p2s-ready
.venv/.p2s-ready: tests/requirements-paddle3.txt runtime/pyproject.toml scripts/venv.sh
	sh scripts/venv.sh .venv tests/requirements-paddle3.txt
.venv-2.6/.p2s-ready: tests/requirements-paddle2.txt runtime/pyproject.toml scripts/venv.sh
	sh scripts/venv.sh .venv-2.6 tests/requirements-paddle2.txt

unit: $(UNIT_BIN)
	sh tests/run_unit.sh $(UNIT_BIN)
golden: $(BIN)
	sh tests/golden/run.sh $(BIN)
cli: $(BIN)
	sh tests/cli/run.sh $(BIN)
e2e: $(BIN) venv
	sh tests/e2e/run.sh $(BIN)

# Every suite, then one combined `N passed, N failed` line (scripts/check.sh).
check: $(BIN) $(UNIT_BIN) venv
	sh scripts/check.sh $(BIN) $(UNIT_BIN)

demo: $(BIN) venv
	sh scripts/demo.sh $(BIN)

# Benchmarks: not part of check. bench prints; bench-doc rewrites docs/PERFORMANCE.md's figures.
bench: $(BIN) venv
	$(PYTHON) tests/bench/run.py $(BIN)
	sh tests/bench/models.sh
bench-doc: $(BIN) venv
	$(PYTHON) tests/bench/run.py $(BIN) --write build/bench/tool.md
	sh tests/bench/models.sh build/bench/models.md
	$(PYTHON) tests/bench/write_doc.py build/bench/tool.md build/bench/models.md docs/PERFORMANCE.md

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pylayer2static
	$(PYTHON) -m pip install --quiet --no-deps --prefix $(PREFIX) $(if $(DESTDIR),--root $(DESTDIR)) ./runtime

clean:
	rm -rf build

include mk/reliability.mk

-include $(wildcard $(BUILD)/obj/*.d) $(wildcard $(BUILD)/tests/*.d)
