# The commands a new user types. The real build is Meson (meson.build);
# this file installs dependencies, configures build directories and runs
# the test suites.
#
#   make               build: build/heapscope, build/libheapscope-preload.so
#   make check         every test, then again under ASan+UBSan, then a
#                      short run of every fuzz target (tests/fuzz/README.md)
#   make fuzz          only that fuzz smoke (FUZZ_SECONDS per target)
#   make demo          heapscope's main job on a bundled example
#   make install PREFIX=/usr/local
#   make bench         the benchmarks in bench/ (slow; not part of check)

PREFIX ?= /usr/local
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# seconds of mutation per fuzz target in `make check` / `make fuzz`
FUZZ_SECONDS ?= 15
MESON ?= meson
DEPS_STAMP := $(BUILD)/.deps-ok
# npm packages of the GUI (uplot, playwright-core), from package-lock.json
NPM_STAMP := node_modules/.heapscope-npm-ok
# Re-configure when test files are added or removed (meson lists them).
TEST_LIST := $(shell ls tests/unit/test_*.c tests/integration/t*.bats tests/fuzz/fuzz_*.c \
	2>/dev/null | tr '\n' ' ')

.PHONY: all deps check check-unit fuzz demo install bench clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@scripts/install-deps.sh
	@scripts/npm-deps.sh
	@scripts/dotnet-tools.sh

$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(BUILD) && touch $@

$(NPM_STAMP): package.json package-lock.json $(DEPS_STAMP)
	@scripts/npm-deps.sh

# $(1) = build dir, $(2) = extra meson options (a build configured with
# others is configured again), $(3) = environment of its first setup
# (CC=...); a comma inside an argument of $(call) is written $(comma)
comma := ,
define configure
	@mkdir -p $(1)
	@if [ ! -f $(1)/build.ninja ]; then \
		$(3) $(MESON) setup $(1) $(2) >/dev/null; \
	elif [ "$$(cat $(1)/.test-list 2>/dev/null)" != "$(TEST_LIST)" ] || \
	     [ "$$(cat $(1)/.options 2>/dev/null)" != "$(2)" ]; then \
		$(MESON) setup --reconfigure $(1) $(2) >/dev/null; \
	fi
	@echo "$(TEST_LIST)" > $(1)/.test-list
	@echo "$(2)" > $(1)/.options
endef

$(BUILD)/build.ninja: $(DEPS_STAMP) $(NPM_STAMP) FORCE
	$(call configure,$(BUILD),-Dwerror=true)

# ASan+UBSan. Not -Werror: with -fsanitize gcc's flow warnings
# (-Warray-bounds, -Wformat-truncation) change and misfire; the plain
# build is the one that keeps the code free of warnings.
$(ASAN_BUILD)/build.ninja: $(DEPS_STAMP) $(NPM_STAMP) FORCE
	$(call configure,$(ASAN_BUILD),-Db_sanitize=address$(comma)undefined -Db_lundef=false -Dwerror=false -Dbuildtype=debug -Doptimization=1)

# The fuzz targets: clang, libFuzzer, ASan+UBSan (tests/fuzz/meson.build).
$(FUZZ_BUILD)/build.ninja: $(DEPS_STAMP) $(NPM_STAMP) FORCE
	$(call configure,$(FUZZ_BUILD),-Dfuzz=true -Db_sanitize=address$(comma)undefined -Db_lundef=false -Dbuildtype=debug -Doptimization=1,CC=clang)

FORCE:

# `meson test` builds only what the fuzz suite needs.
FUZZ_TEST = ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 HS_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	$(MESON) test -C $(FUZZ_BUILD) --suite fuzz --print-errorlogs --num-processes 2

# All three suites always run; the last line counts what passed and failed.
check: all $(ASAN_BUILD)/build.ninja $(FUZZ_BUILD)/build.ninja
	@scripts/dotnet-tools.sh
	ninja -C $(ASAN_BUILD)
	@rc=0; \
	$(MESON) test -C $(BUILD) --print-errorlogs --num-processes 2 || rc=1; \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(MESON) test -C $(ASAN_BUILD) --print-errorlogs --num-processes 2 \
		--timeout-multiplier 3 || rc=1; \
	$(FUZZ_TEST) || rc=1; \
	python3 scripts/test-summary.py $(BUILD)/meson-logs/testlog.json \
		$(ASAN_BUILD)/meson-logs/testlog.json \
		$(FUZZ_BUILD)/meson-logs/testlog.json || rc=1; \
	exit $$rc

# The fuzz smoke alone: each target over its seeds, then FUZZ_SECONDS of
# mutation (tests/fuzz/fuzz.sh runs one target for longer).
fuzz: $(FUZZ_BUILD)/build.ninja
	@$(FUZZ_TEST)

check-unit: all
	$(MESON) test -C $(BUILD) --print-errorlogs --num-processes 2

demo: all
	@sh scripts/demo.sh $(BUILD)

install: all
	$(MESON) configure $(BUILD) -Dprefix=$(abspath $(PREFIX))
	ninja -C $(BUILD) >/dev/null
	$(MESON) install -C $(BUILD) --destdir "$(DESTDIR)" >/dev/null
	@echo "installed heapscope under $(DESTDIR)$(PREFIX)"

bench: all
	@scripts/install-deps.sh --bench
	@sh bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
