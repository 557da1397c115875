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
# test_transpile breaks plans on purpose, by wrapping p2s_plan_build at link time.
UNIT_WRAP = $(if $(filter %/test_transpile,$@),-Wl$(comma)--wrap=p2s_plan_build)

.DELETE_ON_ERROR:
.PHONY: all deps venv check unit golden cli e2e mutations e2e-dist e2e-dist-doc onnx onnx-doc onnx-tools lsp-test conformance stress demo bench bench-doc bench-instructions bench-doc-twins-rows install clean wheel wheel-test matrix matrix-check

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
	$(CC) $(CFLAGS) -Isrc -DP2S_GRAMMAR_VERSION='"$(GRAMMAR_VERSION)"' $(LDFLAGS) $(UNIT_WRAP) $< $(LIB_OBJ) $(LDLIBS) -lcmocka -o $@

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
# Each fix for Python state in bodies broken in turn: its tests must fail (docs/DESIGN.md).
mutations: $(BIN) venv
	sh tests/e2e/mutate_python_state.sh $(BIN)
# Distributed training: tests/dist under `paddle.distributed.launch --nproc_per_node 2` (CPU,
# gloo) on both venvs, and docs/SUPPORT.md's distributed table checked; e2e-dist-doc rewrites it.
e2e-dist: $(BIN) venv
	sh tests/dist/run.sh $(BIN)
e2e-dist-doc: $(BIN) venv
	sh tests/dist/run.sh $(BIN) --write
# ONNX deployment: every e2e case that exports, saved with paddle.jit.save transpiled and as
# written, converted by paddle2onnx and run in ONNX Runtime against eager, on both venvs; then
# docs/SUPPORT.md's `onnx` table checked (onnx-doc rewrites it). The tools live in
# build/onnx-tools, never in the Paddle venvs: ONNX Runtime in a venv of its own, and each
# paddle2onnx line installed --no-deps --target, put on sys.path after the venv's site-packages.
ONNX_TOOLS := build/onnx-tools/.p2s-ready
ONNX_REQS := tests/onnx/requirements-tools.txt tests/onnx/paddle2onnx-3.txt tests/onnx/paddle2onnx-2.6.txt
$(ONNX_TOOLS): $(ONNX_REQS)
	rm -rf $(dir $@)
	$(PYTHON) -m venv $(dir $@)venv
	$(dir $@)venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes -r $<
	for line in 3 2.6; do \
		$(dir $@)venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps \
			--only-binary :all: --target $(dir $@)paddle2onnx-$$line -r tests/onnx/paddle2onnx-$$line.txt || exit 1; \
	done
	touch $@
onnx-tools: $(ONNX_TOOLS)
onnx: $(BIN) venv $(ONNX_TOOLS)
	sh tests/onnx/run.sh $(BIN)
onnx-doc: $(BIN) venv $(ONNX_TOOLS)
	sh tests/onnx/run.sh $(BIN) --write
# The language server: protocol tests over pipes and headless Neovim (tests/lsp/run.sh).
lsp-test: $(BIN) $(DEPS_STAMP)
	sh tests/lsp/run.sh $(BIN)
# PaddlePaddle's own PyLayer tests (tests/conformance/paddle-tests), untranspiled vs transpiled, on both
# venvs (tests/conformance/README.md).
conformance: $(BIN) venv
	sh tests/conformance/run.sh $(BIN)
# The transpiled dygraph_to_static/test_pylayer.py run STRESS_RUNS times in fresh processes beside
# busy ones, counting crashes (docs/RELIABILITY.md); STRESS_ARGS passes other options
# (tests/stress/stress.py: --venv, --untranspiled, --perturb). Not part of check.
STRESS_RUNS ?= 200
stress: $(BIN) venv
	$(PYTHON) tests/stress/stress.py $(BIN) --runs $(STRESS_RUNS) $(STRESS_ARGS)

# Every suite, then one combined `N passed, N failed` line (scripts/check.sh).
check: $(BIN) $(UNIT_BIN) venv
	sh scripts/check.sh $(BIN) $(UNIT_BIN)

demo: $(BIN) venv
	sh scripts/demo.sh $(BIN)

# Benchmarks: not part of check. bench prints; bench-doc rewrites docs/PERFORMANCE.md's figures.
# TWINS_ARGS passes options to tests/bench/twins.py (e.g. TWINS_ARGS="--repeat 9 --turn 0.5").
bench: $(BIN) venv
	$(PYTHON) tests/bench/run.py $(BIN)
	sh tests/bench/models.sh
	sh tests/bench/twins.sh $(TWINS_ARGS)
	sh tests/bench/construction.sh
	sh tests/bench/recompute.sh
	$(PYTHON) tests/bench/lsp_bench.py $(BIN)
# The instruction-count table alone (callgrind; no venv): docs/PERFORMANCE.md's rewritten.
bench-instructions: $(BIN)
	$(PYTHON) tests/bench/run.py $(BIN) --instructions-only --write build/bench/instructions.md
	$(PYTHON) tests/bench/write_doc.py docs/PERFORMANCE.md --instructions build/bench/instructions.md
bench-doc: $(BIN) venv
	$(PYTHON) tests/bench/run.py $(BIN) --write build/bench/tool.md
	sh tests/bench/models.sh build/bench/models.md
	sh tests/bench/twins.sh -o build/bench/twins.md $(TWINS_ARGS)
	sh tests/bench/construction.sh -o build/bench/construction.md
	sh tests/bench/recompute.sh -o build/bench/recompute.md
	$(PYTHON) tests/bench/write_doc.py docs/PERFORMANCE.md --measured build/bench/tool.md build/bench/models.md \
		--twins build/bench/twins.md --construction build/bench/construction.md --recompute build/bench/recompute.md
# The twins rows of TWINS_MODELS only (e.g. TWINS_MODELS=lora_frozen), the doc's other rows kept.
bench-doc-twins-rows: $(BIN) venv
	sh tests/bench/twins.sh -o build/bench/twins_rows.md --models $(TWINS_MODELS) $(TWINS_ARGS)
	$(PYTHON) tests/bench/write_doc.py docs/PERFORMANCE.md --twins-rows build/bench/twins_rows.md

# The pip package: dist/pylayer2static-VERSION-py3-none-manylinux_*.whl, the binary statically
# linked (tree-sitter from libtree-sitter-dev's .a, the grammar, cJSON from Debian's source
# package) plus the runtime (docs/PACKAGING.md). wheel-test installs it into a fresh venv with a
# released paddlepaddle and runs the request's example from that install only.
CJSON_SRC := build/wheel-deps/cjson
WHEEL_TOOLS := build/wheel-tools/.p2s-ready
$(CJSON_SRC)/cJSON.c: scripts/fetch_cjson.sh $(DEPS_STAMP)
	sh scripts/fetch_cjson.sh $(CJSON_SRC)
$(WHEEL_TOOLS): packaging/requirements-tools.txt
	rm -rf $(dir $@)
	$(PYTHON) -m venv $(dir $@)
	$(dir $@)bin/python -m pip install -q --disable-pip-version-check -r $<
	touch $@
wheel: $(GRAMMAR_SRC)/parser.c $(CJSON_SRC)/cJSON.c $(WHEEL_TOOLS)
	sh scripts/wheel.sh
wheel-test: wheel
	sh tests/wheel/run.sh

# Every released paddlepaddle CPU build from 2.6.2 on (the newest patch of each minor), one
# cached venv each (build/matrix/venv-X.Y.Z; the pinned .venv and .venv-2.6 serve their
# versions): the e2e and conformance suites on each, and the table of docs/SUPPORT.md.
# Not part of check (CI's time); matrix-check must pass before a release.
matrix: $(BIN) venv
	sh tests/matrix/run.sh --write $(BIN)
matrix-check: $(BIN) venv
	sh tests/matrix/run.sh --check $(BIN)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pylayer2static
	$(PYTHON) -m pip install --quiet --no-deps --prefix $(PREFIX) $(if $(DESTDIR),--root $(DESTDIR)) ./runtime

clean:
	rm -rf build

include mk/reliability.mk

-include $(wildcard $(BUILD)/obj/*.d) $(wildcard $(BUILD)/tests/*.d)
