# gpuxray - thin wrapper over CMake. `make run`, `make test`, `make bench`.
#
# Every target first installs the Debian packages the build needs when some are
# missing (scripts/deps.sh reads scripts/debian-packages.txt: as root it runs apt-get,
# otherwise it prints the apt-get line and stops with exit 2; GX_SKIP_DEPS=1 skips
# the check), then configures the build folder if it is not (scripts/configure.sh:
# a half-configured folder is configured again from scratch).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan
RELEASE_BUILD ?= build-release
CLANG_BUILD ?= build-clang
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
CLANG ?= clang

.PHONY: all deps build run test test-fast test-asan bench holdout check-builds fuzz clean

all: build

deps:
ifneq ($(GX_SKIP_DEPS),1)
	@./scripts/deps.sh
endif

build: deps
	@./scripts/configure.sh $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

# Discover the default target: the first usable CUDA GPU, else the simulated seed card
# (built into the binary).
run: build
	./$(BUILD)/gpuxray discover

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	@./scripts/configure.sh $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGX_SANITIZE=ON -DCMAKE_C_FLAGS_DEBUG="-O1 -g"
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && GX_TEST_SCALE=sanitizer ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# Everything: the suite, then the suite again under ASan + UBSan.
test: test-fast test-asan

bench: build
	./scripts/bench.sh $(BUILD)

holdout: build
	./$(BUILD)/gpuxray holdout --count 200
	./$(BUILD)/gpuxray holdout --count 200 --only tlb

# The build types the suite does not build: Release with gcc (optimiser-dependent
# warnings such as -Wformat-truncation; the library sources and the binary) and Debug
# with clang (everything: library, binary, tests, benchmarks; -O0 compiles fast);
# warnings are errors as everywhere.
check-builds: deps
	@./scripts/configure.sh $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(RELEASE_BUILD) -j $(JOBS) --target gpuxray
	@./scripts/configure.sh $(CLANG_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=$(CLANG)
	cmake --build $(CLANG_BUILD) -j $(JOBS)

# libFuzzer harnesses (fuzz/*.c) under ASan + UBSan, each for FUZZ_SECONDS from the
# seed corpus in fuzz/corpus/ (docs/fuzzing.md).
fuzz: deps
	@./scripts/configure.sh $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=$(CLANG) \
	  -DGX_FUZZ=ON -DCMAKE_C_FLAGS_DEBUG="-O1 -g"
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target gx_fuzzers
	./scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(RELEASE_BUILD) $(CLANG_BUILD) $(FUZZ_BUILD)
