# Two commands set up everything on a fresh machine:
#   make run    install what is missing, build a Release binary, run `gpuvet check` here
#   make test   also install the test-only tools, build, run the whole suite with CTest, then build
#               a second tree with AddressSanitizer + UndefinedBehaviorSanitizer and run the suite's
#               tests of gpuvet and the driver test doubles there (any sanitizer report fails)
BUILD      ?= build
ASAN_BUILD ?= build-asan
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc)
GPUVET     := $(BUILD)/gpuvet
# The build's own make runs under this one: without this it prints every folder it enters.
MAKEFLAGS  += --no-print-directory

.PHONY: all deps build sanitized run test bench fuzz clean

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

sanitized: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

run: build
	$(GPUVET) check

test: DEPS_MODE := --test
test: build sanitized
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

bench: build
	scripts/bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
