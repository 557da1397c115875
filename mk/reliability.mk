# Reliability targets (fuzzing, sanitizers, valgrind, fault injection); owned by the
# reliability work. None of them is part of a plain build. See docs/RELIABILITY.md.
#
#   make fuzz            libFuzzer (clang, ASan+UBSan) over the whole in-memory pipeline;
#                        FUZZ_TARGET=fuzz_transpile (default), fuzz_rules or fuzz_lsp, FUZZ_TIME seconds
#                        (default 600); the corpus grows in build/fuzz/corpus-TARGET
#   make fuzz-coverage   line coverage of src/ by the fuzz corpora (clang source-based coverage)
#   make fuzz-replay     seeds, kept corpora and tests/fuzz/regressions through both targets,
#                        built with the default compiler under ASan+UBSan (no clang needed)
#   make sanitize-check  unit, golden and CLI suites against the ASan+UBSan build
#   make tsan-check      the CLI suite against a ThreadSanitizer build (tree mode's workers)
#   make valgrind-check  the CLI suite with every run under valgrind memcheck
#   make reliability     tests/reliability: fault injection and hostile inputs
# `make check` runs all of them except `fuzz` and `fuzz-coverage` (scripts/check.sh).

.PHONY: fuzz fuzz-build fuzz-seeds fuzz-coverage fuzz-replay fuzz-replay-build sanitize-build \
        sanitize-check tsan-build tsan-check valgrind-check reliability

REL_SANITIZE := address,undefined
REL_SAN_BUILD := build/sanitize
REL_SAN_BIN := $(REL_SAN_BUILD)/pylayer2static
REL_SAN_UNIT := $(patsubst tests/unit/%.c,$(REL_SAN_BUILD)/tests/%,$(UNIT_SRC))
REL_TSAN_BUILD := build/tsan
REL_FUZZ_BUILD := build/fuzz
REL_COV_BUILD := build/fuzz-cov
REL_FUZZ_TARGETS := fuzz_transpile fuzz_rules fuzz_lsp
FUZZ_TARGET ?= fuzz_transpile
FUZZ_TIME ?= 600
FUZZ_FLAGS ?= -max_len=16384 -timeout=10 -rss_limit_mb=2048
REL_SEEDS_fuzz_transpile = $(wildcard tests/golden/*/input.py samples/*.py tests/e2e/cases/*.py)
REL_SEEDS_fuzz_rules = $(wildcard rules/*.json tests/golden/*/rules.json)
REL_NO_DEPFLAGS = $(filter-out -MMD -MP,$(CFLAGS))
# The transpile target sees the plan p2s_transpile emitted from by wrapping p2s_plan_build.
REL_WRAP = $(if $(filter %transpile,$@),-Wl$(comma)--wrap=p2s_plan_build)
comma := ,

# The targets linked against this build's library objects (the sub-makes below set BUILD, CC,
# SANITIZE): with libFuzzer, and with the plain replay driver.
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REL_NO_DEPFLAGS) -fsanitize=fuzzer -Isrc $(LDFLAGS) $(REL_WRAP) $< $(LIB_OBJ) $(LDLIBS) -o $@
$(BUILD)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REL_NO_DEPFLAGS) -Isrc $(LDFLAGS) $(REL_WRAP) $< tests/fuzz/replay_main.c $(LIB_OBJ) $(LDLIBS) -o $@

# clang and its libFuzzer runtime come from Debian; clang's warnings differ from gcc's, so
# -Werror stays with the gcc build.
fuzz-build: deps $(GRAMMAR_SRC)/parser.c
	@command -v clang >/dev/null 2>&1 && ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || \
	    { echo "fuzz: installing clang and libclang-rt-14-dev"; \
	      SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	      $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev; }
	$(MAKE) CC=clang BUILD=$(REL_FUZZ_BUILD) SANITIZE=$(REL_SANITIZE) WARNINGS="-Wall -Wextra" \
	    CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(addprefix $(REL_FUZZ_BUILD)/fuzz/,$(REL_FUZZ_TARGETS))

# Seeds are copied at build time from the project's own test inputs, never committed twice.
fuzz-seeds:
	@for t in $(REL_FUZZ_TARGETS); do rm -rf $(REL_FUZZ_BUILD)/seeds-$$t; mkdir -p $(REL_FUZZ_BUILD)/seeds-$$t $(REL_FUZZ_BUILD)/corpus-$$t; done
	@for f in $(REL_SEEDS_fuzz_transpile); do cp "$$f" "$(REL_FUZZ_BUILD)/seeds-fuzz_transpile/$$(echo "$$f" | tr / _)"; done
	@for f in $(REL_SEEDS_fuzz_rules); do cp "$$f" "$(REL_FUZZ_BUILD)/seeds-fuzz_rules/$$(echo "$$f" | tr / _)"; done
	@cp tests/fuzz/corpus/fuzz_lsp/* $(REL_FUZZ_BUILD)/seeds-fuzz_lsp/  # LSP sessions (tests/lsp/make_fuzz_seeds.py)

fuzz: fuzz-build fuzz-seeds
	@mkdir -p tests/fuzz/regressions/$(FUZZ_TARGET)
	cd $(REL_FUZZ_BUILD) && nice -n 10 ./fuzz/$(FUZZ_TARGET) $(FUZZ_FLAGS) -jobs=1 -workers=1 \
	    -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=crash-$(FUZZ_TARGET)- \
	    corpus-$(FUZZ_TARGET) seeds-$(FUZZ_TARGET) ../../tests/fuzz/regressions/$(FUZZ_TARGET)

# Line coverage of src/ by everything the fuzzers kept: the replay drivers built with clang's
# source-based coverage, run over the corpora and the seeds (not the regressions: a known
# crasher aborts its batch before the profile is written).
fuzz-coverage: fuzz-seeds
	$(MAKE) CC=clang BUILD=$(REL_COV_BUILD) WARNINGS="-Wall -Wextra" \
	    CFLAGS="-O1 -g -fprofile-instr-generate -fcoverage-mapping" LDFLAGS="-fprofile-instr-generate" \
	    $(addprefix $(REL_COV_BUILD)/fuzz/replay_,$(patsubst fuzz_%,%,$(REL_FUZZ_TARGETS)))
	rm -f $(REL_COV_BUILD)/*.profraw
	for t in $(patsubst fuzz_%,%,$(REL_FUZZ_TARGETS)); do \
	    find $(REL_FUZZ_BUILD)/corpus-fuzz_$$t $(REL_FUZZ_BUILD)/seeds-fuzz_$$t \
	        -type f 2>/dev/null | tr '\n' '\0' | \
	        LLVM_PROFILE_FILE=$(REL_COV_BUILD)/$$t-%p.profraw xargs -0 -r $(REL_COV_BUILD)/fuzz/replay_$$t >/dev/null 2>&1; \
	done; true
	llvm-profdata merge -sparse $(REL_COV_BUILD)/*.profraw -o $(REL_COV_BUILD)/all.profdata
	llvm-cov report $(REL_COV_BUILD)/fuzz/replay_transpile -object $(REL_COV_BUILD)/fuzz/replay_rules \
	    -instr-profile=$(REL_COV_BUILD)/all.profdata $(filter-out src/main.c,$(wildcard src/*.c))

fuzz-replay-build: deps $(GRAMMAR_SRC)/parser.c
	$(MAKE) SANITIZE=$(REL_SANITIZE) $(REL_SAN_BUILD)/fuzz/replay_transpile $(REL_SAN_BUILD)/fuzz/replay_rules \
	    $(REL_SAN_BUILD)/fuzz/replay_lsp

fuzz-replay: fuzz-replay-build fuzz-seeds
	sh tests/fuzz/replay.sh $(REL_SAN_BUILD)/fuzz

sanitize-build: deps $(GRAMMAR_SRC)/parser.c
	$(MAKE) SANITIZE=$(REL_SANITIZE) $(REL_SAN_BIN) $(REL_SAN_UNIT) \
	    $(REL_SAN_BUILD)/fuzz/replay_transpile $(REL_SAN_BUILD)/fuzz/replay_rules $(REL_SAN_BUILD)/fuzz/replay_lsp

tsan-build: deps $(GRAMMAR_SRC)/parser.c
	$(MAKE) SANITIZE=thread BUILD=$(REL_TSAN_BUILD) $(REL_TSAN_BUILD)/pylayer2static

tsan-check: tsan-build
	sh tests/reliability/cli_wrapped.sh tsan $(REL_TSAN_BUILD)/pylayer2static

sanitize-check: sanitize-build
	sh tests/run_unit.sh $(REL_SAN_UNIT)
	sh tests/golden/run.sh $(REL_SAN_BIN)
	sh tests/cli/run.sh $(REL_SAN_BIN)

valgrind-check: $(BIN)
	sh tests/reliability/cli_wrapped.sh valgrind $(BIN)

reliability: $(BIN)
	sh tests/reliability/run.sh $(BIN)

# `make check` builds the instrumented binaries and the seeds as well (scripts/check.sh runs them).
check: sanitize-build tsan-build fuzz-seeds
