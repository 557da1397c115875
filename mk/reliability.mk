# Reliability targets (fuzzing, sanitizers, valgrind, fault injection); owned by the
# reliability work. None of them is part of a plain build. See docs/RELIABILITY.md.
#
#   make fuzz            libFuzzer (clang, ASan+UBSan) over the whole in-memory pipeline;
#                        FUZZ_TIME seconds (default 600), corpus in build/fuzz/corpus
#   make fuzz-replay     seeds + kept corpus + tests/fuzz/regressions through the target, built
#                        with the default compiler under ASan+UBSan (no clang needed)
#   make sanitize-check  unit, golden and CLI suites against the ASan+UBSan build
#   make valgrind-check  the CLI suite with every run under valgrind memcheck
#   make reliability     tests/reliability: fault injection and hostile inputs
# `make check` runs all of them except `fuzz` (scripts/check.sh).

.PHONY: fuzz fuzz-build fuzz-seeds fuzz-replay fuzz-replay-build sanitize-build sanitize-check \
        valgrind-check reliability

REL_SANITIZE := address,undefined
REL_SAN_BUILD := build/sanitize
REL_SAN_BIN := $(REL_SAN_BUILD)/pylayer2static
REL_SAN_UNIT := $(patsubst tests/unit/%.c,$(REL_SAN_BUILD)/tests/%,$(UNIT_SRC))
REL_FUZZ_BUILD := build/fuzz
FUZZ_TIME ?= 600
FUZZ_FLAGS ?= -max_len=16384 -timeout=10 -rss_limit_mb=2048
FUZZ_SEED_SOURCES = $(wildcard tests/golden/*/input.py samples/*.py tests/e2e/cases/*.py)
REL_NO_DEPFLAGS = $(filter-out -MMD -MP,$(CFLAGS))

# The fuzz target and the replay driver, linked against this build's library objects (the
# sub-makes below set BUILD, CC and SANITIZE).
$(BUILD)/fuzz/fuzz_transpile: tests/fuzz/fuzz_transpile.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REL_NO_DEPFLAGS) -fsanitize=fuzzer -Isrc $(LDFLAGS) -Wl,--wrap=p2s_plan_build $< $(LIB_OBJ) $(LDLIBS) -o $@
$(BUILD)/fuzz/fuzz_replay: tests/fuzz/fuzz_transpile.c tests/fuzz/replay_main.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REL_NO_DEPFLAGS) -Isrc $(LDFLAGS) -Wl,--wrap=p2s_plan_build tests/fuzz/fuzz_transpile.c tests/fuzz/replay_main.c \
	    $(LIB_OBJ) $(LDLIBS) -o $@

# clang's own warnings differ from gcc's; -Werror stays with the gcc build.
fuzz-build:
	@command -v clang >/dev/null 2>&1 && ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || \
	    { echo "fuzz: installing clang and libclang-rt-14-dev"; \
	      SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	      $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev; }
	$(MAKE) CC=clang BUILD=$(REL_FUZZ_BUILD) SANITIZE=$(REL_SANITIZE) WARNINGS="-Wall -Wextra" \
	    CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(REL_FUZZ_BUILD)/fuzz/fuzz_transpile

# Seeds are copied at build time from the project's own test inputs, never committed twice.
fuzz-seeds:
	@rm -rf $(REL_FUZZ_BUILD)/seeds && mkdir -p $(REL_FUZZ_BUILD)/seeds $(REL_FUZZ_BUILD)/corpus
	@for f in $(FUZZ_SEED_SOURCES); do cp "$$f" "$(REL_FUZZ_BUILD)/seeds/$$(echo "$$f" | tr / _)"; done

fuzz: fuzz-build fuzz-seeds
	cd $(REL_FUZZ_BUILD) && nice -n 10 ./fuzz/fuzz_transpile $(FUZZ_FLAGS) -jobs=1 -workers=1 \
	    -max_total_time=$(FUZZ_TIME) -print_final_stats=1 -artifact_prefix=crash- \
	    corpus seeds ../../tests/fuzz/regressions

fuzz-replay-build: deps $(GRAMMAR_SRC)/parser.c
	$(MAKE) SANITIZE=$(REL_SANITIZE) $(REL_SAN_BUILD)/fuzz/fuzz_replay

fuzz-replay: fuzz-replay-build fuzz-seeds
	sh tests/fuzz/replay.sh $(REL_SAN_BUILD)/fuzz/fuzz_replay

sanitize-build: deps $(GRAMMAR_SRC)/parser.c
	$(MAKE) SANITIZE=$(REL_SANITIZE) $(REL_SAN_BIN) $(REL_SAN_UNIT) $(REL_SAN_BUILD)/fuzz/fuzz_replay

sanitize-check: sanitize-build
	sh tests/run_unit.sh $(REL_SAN_UNIT)
	sh tests/golden/run.sh $(REL_SAN_BIN)
	sh tests/cli/run.sh $(REL_SAN_BIN)

valgrind-check: $(BIN)
	sh tests/reliability/valgrind_cli.sh $(BIN)

reliability: $(BIN)
	sh tests/reliability/run.sh $(BIN)

# `make check` builds the instrumented binaries as well (scripts/check.sh runs them).
check: sanitize-build fuzz-seeds
