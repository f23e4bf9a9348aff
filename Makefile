# cueue: the two commands a newcomer needs are `make demo` and `make test`.
# Everything else is a convenience. The real build is CMake (build/ for the
# plain binary, build-asan/ for the sanitizer build the tests run under).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all deps build asan demo test unit e2e conformance bench lint clean crash-test

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

$(ASAN_BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCUEUE_SANITIZE=ON >/dev/null

build: deps $(BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(BUILD) -j$(JOBS)

asan: deps $(ASAN_BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(ASAN_BUILD) -j$(JOBS)

# The main demo: the seed's walkthrough on this machine (see README.md).
demo: deps $(BUILD)/Makefile
	@$(MAKE) --no-print-directory -C $(BUILD) -j$(JOBS) cueue >/dev/null
	@./examples/demo.sh $(BUILD)/cueue

# Every test: unit, conformance and end-to-end under ASan+UBSan, and the
# engine's unit tests under valgrind in the plain build.
test: build asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j$(JOBS) -LE valgrind
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L valgrind

unit: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit

e2e: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L e2e

conformance: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -L conformance

# The crash-safety test at full size (docs/reliability.md, "Crashes"): 2,000
# Jobs, 25 SIGKILLs of the server; `make test` runs it at 300 Jobs, 10 kills.
crash-test: asan
	CUEUE_BUILD=$(ASAN_BUILD) CUEUE_E2E_TIMEOUT=120 bash tests/crash/crash-test.sh 2000 25

bench: build
	@./bench/run.sh $(BUILD)

lint:
	@./scripts/lint.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
