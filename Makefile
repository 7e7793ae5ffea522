# gpuxray - thin wrapper over CMake. `make run`, `make test`, `make bench`.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all build run test test-fast test-asan bench holdout clean deps

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Discover the default target: the first usable CUDA GPU, else the simulated seed card.
run: build
	./$(BUILD)/gpuxray discover

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGX_SANITIZE=ON -DCMAKE_C_FLAGS_DEBUG="-O1 -g"

test-asan: $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && GX_TEST_SCALE=sanitizer ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# Everything: the suite, then the suite again under ASan + UBSan.
test: test-fast test-asan

bench: build
	./scripts/bench.sh $(BUILD)

holdout: build
	./$(BUILD)/gpuxray holdout --count 200

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
