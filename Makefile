# Makefile: a thin wrapper around CMake giving the README's commands.
#   make demo    the main job on a bundled example
#   make test    build + every CPU-lane test (the GPU lane is skipped, visibly, without a GPU)
#   make gpu-test  build + the GPU lane (needs a device)
#   make asan    the CPU lane under AddressSanitizer + UBSan (leaks included)
#   make minimal-test  the CPU lane of a build without the optional parts (libcurl) as on a fresh
#                offline machine: empty HOME, no network and a private /tmp where unshare can
#                (root); fails when the tests leave anything in HOME or /tmp
#   make fuzz    every libFuzzer target (tests/fuzz, clang) for FUZZ_SECONDS each (default 60)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps build test gpu-test demo asan minimal-test fuzz clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Each skipped test's reason (from ctest's JUnit report) follows ctest's summary.
test: build
	cd $(BUILD) && ctest -L cpu --no-tests=error --output-on-failure -j $(JOBS) --output-junit cpu-lane.xml
	@bash scripts/lane-skips.sh $(BUILD)/cpu-lane.xml
	@bash scripts/gpu-lane-note.sh $(BUILD)

gpu-test: build
	cd $(BUILD) && ctest -L gpu --output-on-failure --output-junit gpu-lane.xml
	@bash scripts/lane-skips.sh $(BUILD)/gpu-lane.xml

demo: build
	@bash scripts/demo.sh $(BUILD)/sparseditto

asan: deps
	cmake -S . -B $(BUILD)-asan -DSD_SANITIZE=address,undefined -DSD_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1:protect_shadow_gap=0 ctest -L cpu --output-on-failure -j $(JOBS) \
	  --output-junit cpu-lane.xml
	@bash scripts/lane-skips.sh $(BUILD)-asan/cpu-lane.xml

minimal-test: deps
	cmake -S . -B $(BUILD)-minimal -DSD_WITH_CURL=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)-minimal -j $(JOBS)
	JOBS=$(JOBS) bash scripts/isolated-lane.sh $(BUILD)-minimal

fuzz: deps
	cmake -S . -B $(BUILD)-fuzz -DCMAKE_C_COMPILER=clang -DSD_BUILD_FUZZ=ON -DSD_BUILD_TESTS=OFF -DSD_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_mtx fuzz_cache
	for t in fuzz_mtx fuzz_cache; do mkdir -p $(BUILD)-fuzz/corpus-$$t && \
	  $(BUILD)-fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(BUILD)-fuzz/corpus-$$t || exit 1; done

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-minimal $(BUILD)-fuzz
