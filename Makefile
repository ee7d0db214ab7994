# Convenience wrapper around CMake. `make help` lists the targets.
BUILD      ?= build
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 60
CMAKE_ARGS ?=
PREFIX     ?= /usr/local

# Quiet recursion: CMake's generated makefiles otherwise print an "Entering/Leaving directory"
# pair for every target (half of a build's output); compiler warnings and errors still show.
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build test test-no-server check asan tsan fuzz fuzz-build bench soak demo install format clean help

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

## make test: install missing dependencies, build, run every test (unit, integration, conformance, corpora)
test: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

## make test-no-server: libkcache alone (-DKC_BUILD_SERVER=OFF) in build-noserver/: build, run its tests
test-no-server: deps
	cmake -S . -B build-noserver -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKC_BUILD_SERVER=OFF $(CMAKE_ARGS)
	cmake --build build-noserver -j $(JOBS)
	cd build-noserver && ctest --output-on-failure -j $(JOBS)

## make check: ASan+UBSan and TSan builds, each running the unit, integration and soak tests
check: deps asan tsan

asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKC_SANITIZE=address -DKC_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -L 'unit|integration|fuzz_corpus|soak'

tsan:
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DKC_SANITIZE=thread -DKC_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -L 'unit|integration|soak'

## make fuzz: build the libFuzzer targets with clang and run each for FUZZ_SECONDS (default 60)
fuzz-build: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DKC_FUZZ=ON -DKC_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build build-fuzz -j $(JOBS) --target kc_fuzzers

fuzz: fuzz-build
	scripts/run-fuzzers build-fuzz $(FUZZ_SECONDS)

## make bench: build with optimisation and run every benchmark (prints BENCH lines)
bench: deps build
	scripts/run-benches $(BUILD)

## make bench-enrich: rsyslog + mmkubernetes vs rsyslog + mmexternal + kcache enrich on one kcache serve per pod count (PODS="200 2000"): records/s (and the mmexternal pipe's floor), CPU, RSS, API requests, current labels 2 s/30 s after a relabel, deleted pods, a 429 burst (~3 min; installs rsyslog with apt-get when missing; needs root)
.PHONY: bench-enrich
bench-enrich: configure
	cmake --build $(BUILD) -j $(JOBS) --target kcache_cli bench_mmx_echo
	KCACHE=$(BUILD)/bin/kcache bench/enrich_h2h.sh

## make bench-node-agents: 100 simulated nodes x 110 pods on one kcache serve; 100 kc_podmeta watch agents vs 100 GET-per-pod agents (mmkubernetes, fluent-bit) under pod churn RATES="0 1 10 50"/s, WINDOW_S=15 s each: API requests and server CPU per hour, a table and docs/img/node-agents-scale.svg (~5 min)
.PHONY: bench-node-agents
bench-node-agents: configure
	cmake --build $(BUILD) -j $(JOBS) --target kcache_cli bench_node_agents
	$(BUILD)/bin/bench_node_agents | tee $(BUILD)/bench-node-agents.txt
	python3 bench/plot_node_agents.py -o docs/img/node-agents-scale.svg $(BUILD)/bench-node-agents.txt

## make bench-peers: initial sync of N Pods (N=20000) by kcache, client-node, python-kubernetes and kubectl from one server, side by side (REPS=3)
.PHONY: bench-peers
bench-peers: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target kcache_cli bench_sync
	KCACHE=$(BUILD)/bin/kcache BENCH_SYNC=$(BUILD)/bin/bench_sync bench/peers.sh $(or $(N),20000)

## make soak: the fault soak (docs/soak.md): >= 10,000 writes under faults, checks, BENCH lines (SOAK_ARGS=...)
soak: deps build
	$(BUILD)/bin/kcache_soak $(SOAK_ARGS)

## make demo: run the read-your-writes demo on the embedded API server (builds the CLI only)
demo:
	@scripts/install-deps --no-npm
	@$(MAKE) -s configure
	cmake --build $(BUILD) -j $(JOBS) --target kcache_cli
	$(BUILD)/bin/kcache demo

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-noserver

help:
	@grep -E '^## ' Makefile | sed 's/^## //'
