# Two commands set up everything on a fresh machine:
#   make run    install what is missing, build a Release binary, run `gpuvet check` here
#   make test   install what is missing, build, run the whole suite with CTest
BUILD      ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc)
GPUVET     := $(BUILD)/gpuvet
# The build's own make runs under this one: without this it prints every folder it enters.
MAKEFLAGS  += --no-print-directory

.PHONY: all deps build run test bench fuzz clean

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(GPUVET) check

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	scripts/bench

clean:
	rm -rf $(BUILD)
