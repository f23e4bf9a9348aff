# cueue: the two commands a newcomer needs are `make demo` and `make test`.
# Everything else is a convenience. The real build is CMake (build/ for the
# plain binary, build-asan/ for the sanitizer build the tests run under).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all deps build asan demo test unit e2e e2e-oci-many conformance bench lint clean

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

# The OCI pod test with 200 pods in its leak count (the default test runs 10).
e2e-oci-many: asan
	cd $(ASAN_BUILD) && CUEUE_OCI_PODS=200 ctest --output-on-failure -R e2e/t6000-oci-pods

conformance: asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -L conformance

bench: build
	@./bench/run.sh $(BUILD)

lint:
	@./scripts/lint.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
