# Thin wrapper over CMake. `make up` and `make test` are the two commands a user needs.
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GCC_DIR := build/gcc
ASAN_DIR := build/asan
FUZZ_DIR := build/fuzz
FUZZ_SECONDS ?= 30
SRC_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find src cmd tests fuzz bench -name '*.[ch]')

.PHONY: all deps build up test test-gcc test-asan test-valgrind check-format check-tidy fmt bench bench-deps \
	bench-apiserver bench-nodemetric bench-agent bench-scheduler bench-conns fuzz crds image clean

all: build

deps:
	@scripts/install-deps.sh

$(GCC_DIR)/CMakeCache.txt:
	cmake -S . -B $(GCC_DIR) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc -DKOORD_WERROR=ON >/dev/null

build: deps $(GCC_DIR)/CMakeCache.txt
	cmake --build $(GCC_DIR) -j $(JOBS)

# The main job. Until the servers exist it runs the offline tools on the examples.
up: build
	@scripts/up.sh $(GCC_DIR)/koord

test: deps test-gcc test-asan test-valgrind check-format check-tidy

test-gcc: build
	cd $(GCC_DIR) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
		-DSANITIZE=address,undefined -DKOORD_WERROR=ON >/dev/null
	cmake --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS)

test-valgrind: build
	cd $(GCC_DIR) && ctest -T memcheck -L unit -j $(JOBS) --output-on-failure

check-format:
	@clang-format --dry-run --Werror $(SRC_FILES)

check-tidy: build
	@scripts/check-tidy.sh $(GCC_DIR) $(JOBS)

fmt:
	clang-format -i $(SRC_FILES)

# Every bench/<name> in a Release build; bench/apiserver also needs etcd (installed here, not by
# `deps`: the tests do not need it; without it the benchmark runs the koord side only).
bench: deps bench-deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build build/release --target benches -j $(JOBS)
	@for b in build/release/bench_*; do echo "== $$b"; $$b || exit 1; done

bench-deps:
	@scripts/install-deps.sh --bench || echo "bench: etcd-server not installed; koord side only" >&2

# Only bench/apiserver; BENCH_ARGS passes flags (e.g. BENCH_ARGS="--watchers 10 --no-etcd").
bench-apiserver: deps bench-deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build build/release --target bench_apiserver -j $(JOBS)
	build/release/bench_apiserver $(BENCH_ARGS)

# Only bench/nodemetric (koord manager's NodeMetric API against the CRD path); BENCH_ARGS
# passes flags (e.g. BENCH_ARGS="--nodes 1000 --perf /tmp/manager.perf").
bench-nodemetric: deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build build/release --target bench_nodemetric -j $(JOBS)
	build/release/bench_nodemetric $(BENCH_ARGS)

# Only bench/scheduler (scheduler_perf's workloads against koord scheduler and koord apiserver,
# then the cycle alone); BENCH_ARGS passes flags (e.g. BENCH_ARGS="--workload SchedulingBasic
# --perf /tmp/scheduler.perf").
bench-scheduler: deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build build/release --target bench_scheduler -j $(JOBS)
	build/release/bench_scheduler $(BENCH_ARGS)

# Only bench/agent (koord agent's CPU and memory on a node of 110 pods); BENCH_ARGS passes
# flags (e.g. BENCH_ARGS="--seconds 600").
bench-agent: deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build build/release --target bench_agent -j $(JOBS)
	build/release/bench_agent $(BENCH_ARGS)

# Only bench/conns (10,000 agent connections to koord manager, 10,000 pod watches on koord
# apiserver); BENCH_ARGS passes flags (e.g. BENCH_ARGS="--baseline-koord /path/to/old/koord").
bench-conns: deps
	cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build build/release --target bench_conns -j $(JOBS)
	build/release/bench_conns $(BENCH_ARGS)

# libFuzzer targets, each run for FUZZ_SECONDS on its seed corpus.
fuzz: deps
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
		-DSANITIZE=address,undefined -DKOORD_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	@for f in $(FUZZ_DIR)/fuzz_*; do n=$$(basename $$f); mkdir -p fuzz/corpus-$$n; \
		echo "== $$n ($(FUZZ_SECONDS)s)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -malloc_limit_mb=256 fuzz/corpus-$$n fuzz/seeds/$$n || exit 1; done

# Regenerates deploy/crds from the type descriptions (a test checks they are current).
crds: build
	$(GCC_DIR)/koord crds --output-dir deploy/crds

# The container image deploy/ runs (Dockerfile). IMAGE names it; IMAGE_BUILDER picks the tool,
# default the first usable of podman, buildah and docker (docker only with a reachable daemon).
# DRY_RUN=1 builds nothing: it checks the build context (the Dockerfile's COPY sources and
# that its runtime stage installs the libraries the koord binary links; KOORD_BINARY, default
# build/gcc/koord) and names the builder it would use.
IMAGE ?= koord:latest
IMAGE_BUILDER ?=
DRY_RUN ?=

image:
	@scripts/build-image.sh $(if $(DRY_RUN),--dry-run) "$(IMAGE)" $(IMAGE_BUILDER)

clean:
	rm -rf build
