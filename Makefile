# Two commands set up everything on a fresh machine:
#   make run    install what is missing, build a Release binary, run `gpuvet check` here
#   make test   also install the test-only tools, build, run the whole suite with CTest, then build
#               a second tree with AddressSanitizer + UndefinedBehaviorSanitizer and run every
#               end-to-end test of gpuvet there (any sanitizer report fails)
#   make test-fast  build, then run only the tests labelled fast (docs/testing.md), in under 2 minutes
BUILD      ?= build
ASAN_BUILD ?= build-asan
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc)
GPUVET     := $(BUILD)/gpuvet
# The build's own make runs under this one: without this it prints every folder it enters.
MAKEFLAGS  += --no-print-directory

.PHONY: all deps build sanitized run test test-fast bench fuzz clean

all: build

# `make test` passes --test (inherited by this prerequisite): CUDA 12's ptxas, for the PTX tests.
deps:
	@scripts/install-deps $(DEPS_MODE)

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUVET_SANITIZE=ON

# The sanitized tree builds what its tests run: gpuvet, the driver test doubles it loads, the host
# tests' helper and the canaries that prove a report fails a test.
ASAN_TARGETS := gpuvet fakecuda fakenvml fakecuda_old fakenvml_old fakecublaslt fakenccl fakerccl fakeamdsmi fakerocmsmi fakehip \
                fakehipblaslt deny_syscalls sanitize_canary
# Every command and every scenario, end to end: the e2e tests, the host tests, the no-driver
# inventory and the canaries (names start with their group, docs/testing.md). device-check --fake
# stays in the plain tree: its real-GPU step limits do not hold for kernels interpreted under
# ASan (its check step ran past 120 s), and the commands it runs are the e2e tests' own.
ASAN_TESTS   := ^((e2e|host|sanitize)[.]|bindings[.]cli_inventory)
# Left out there: the end-to-end tests that run the real PyTorch (the child Python is not
# sanitized; importing torch only costs minutes). The harness around them runs sanitized through
# the fake interpreters of the same module.
ASAN_SKIP    := ^e2e[.]train[.]test_torch_

sanitized: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(ASAN_TARGETS)

run: build
	$(GPUVET) check

test: DEPS_MODE := --test
test: build sanitized
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -R '$(ASAN_TESTS)' -E '$(ASAN_SKIP)'

# The fast tier: every test labelled fast (CTest labels, docs/testing.md), no sanitized tree.
test-fast: DEPS_MODE := --test
test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L '^fast$$'

bench: build
	scripts/bench
	cmake --build $(BUILD) -j $(JOBS) --target gpuvet fakenvml
	BUILD_TESTS_DIR=$(BUILD) scripts/bench-top
	BUILD_TESTS_DIR=$(BUILD) scripts/bench-fleet

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
