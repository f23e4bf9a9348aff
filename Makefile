# cueue: the two commands a newcomer needs are `make demo` and `make test`.
# Everything else is a convenience. The real build is CMake (build/ for the
# plain binary, build-asan/ for the sanitizer build the tests run under).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 20
PREFIX ?= /usr/local

.PHONY: all deps build asan demo test unit e2e e2e-oci-many conformance bench bench-check golden-update \
	lint install clean crash-test fuzz

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

$(ASAN_BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCUEUE_SANITIZE=ON >/dev/null

$(FUZZ_BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=Debug \
		-DCUEUE_FUZZ=ON >/dev/null

build: deps $(BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(BUILD) -j$(JOBS)

asan: deps $(ASAN_BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(ASAN_BUILD) -j$(JOBS)

# The main demo: the seed's walkthrough on this machine (see README.md).
# The build shows its progress (CMake's percentages): the first one takes
# about 2 minutes on 2 CPUs, later ones only what changed.
demo: deps $(BUILD)/Makefile
	@echo "make demo: building cueue in $(BUILD)/ (the first build takes about 2 minutes on 2 CPUs)"
	@$(MAKE) --no-print-directory -C $(BUILD) -j$(JOBS) cueue
	@echo "make demo: running examples/demo.sh (about 30 seconds)"
	@./examples/demo.sh $(BUILD)/cueue

# Install cueue and cueue-pod-supervisor into $(DESTDIR)$(PREFIX)/bin
# (default /usr/local; e.g. make install PREFIX=$$HOME/.local).
install: deps $(BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(BUILD) -j$(JOBS) cueue
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

# Every test: unit, conformance (with its golden traces) and end-to-end
# under ASan+UBSan; in the plain build the engine's unit tests under
# valgrind and the performance scenarios' golden traces (bench/check.sh).
test: build asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j$(JOBS) -LE valgrind
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L 'valgrind|plain'

# libFuzzer (clang-14, build-fuzz/): each harness of tests/fuzz for
# FUZZ_SECONDS (default 20), niced; crashes land in build-fuzz/crashes/
# (tests/fuzz/README.md). `make test` replays the committed corpora only.
fuzz: deps $(FUZZ_BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(FUZZ_BUILD) -j$(JOBS) fuzzers
	@./scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

unit: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit

e2e: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L e2e

# The OCI pod test with 200 pods in its leak count (the default test runs 10).
e2e-oci-many: asan
	cd $(ASAN_BUILD) && CUEUE_OCI_PODS=200 ctest --output-on-failure -R e2e/t6000-oci-pods

conformance: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -L conformance

# The crash-safety test at full size (docs/reliability.md, "Crashes"): 2,000
# Jobs, 25 SIGKILLs of the server; `make test` runs it at 300 Jobs, 10 kills.
crash-test: asan
	CUEUE_BUILD=$(ASAN_BUILD) CUEUE_E2E_TIMEOUT=120 bash tests/crash/crash-test.sh 2000 25

bench: build
	@./bench/run.sh $(BUILD)

# The performance scenarios' traces against bench/golden (about a minute).
bench-check: build
	@CUEUE_BIN=$(BUILD)/cueue ./bench/check.sh

# Rewrite every golden trace (tests/conformance/golden, bench/golden) from
# the plain build's cueue sim, after a change meant to alter traces; commit
# the golden files with that change (`git diff --stat` shows which changed).
# A conformance scenario whose facts fail keeps its old golden trace.
golden-update: build
	-GOLDEN_UPDATE=1 CUEUE_BIN=$(BUILD)/cueue ./tests/conformance/run.sh >/dev/null
	CUEUE_BIN=$(BUILD)/cueue ./bench/check.sh --update

# The house rules and cppcheck (scripts/lint.sh); .ci/run runs it beside `make test`.
lint: deps
	@./scripts/lint.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
