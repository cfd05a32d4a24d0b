# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine:
# they install the Debian packages the build needs, configure, build and run.
# `make test` = the unit and end-to-end suite (gcc, $(BUILD)), then every libFuzzer target
# for a few seconds over its seed corpus (clang, $(FUZZ_BUILD)); `make fuzz` runs the
# targets longer (FUZZ_SECONDS each, default 60).
# slurm-wlm and munge are for the Slurm executor's end-to-end tests and benchmark, which
# bring up a private Slurm cluster on this machine (scripts/slurm_up.sh; they need root).
# python3-torch (CPU) runs examples/pytorch/, the PyTorch DDP job tests/pytorch_test.cc
# sends through serve; without it that test skips.
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
JOBS ?= $(shell nproc)
# clang and its libFuzzer runtime build the fuzz targets only; the normal build uses gcc.
APT_PACKAGES := build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev \
  libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libsqlite3-dev \
  libssl-dev libmicrohttpd-dev libcurl4-openssl-dev \
  prometheus-cpp-dev chromium prometheus clang libclang-rt-14-dev help2man \
  slurm-wlm munge python3-torch
# The dashboard's bundle needs node and npm; Debian's are installed only when none is there.
NODE_PACKAGES := $(if $(shell command -v node && command -v npm),,nodejs npm)

.PHONY: deps configure build test demo bench install clean format fuzz-configure fuzz-build fuzz

deps:
	@missing=""; for p in $(APT_PACKAGES) $(NODE_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

configure: deps
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build fuzz-build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(FUZZ_BUILD) && FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) ctest --output-on-failure -j $(JOBS)

fuzz-configure: deps
	@[ -f $(FUZZ_BUILD)/build.ninja ] || cmake -S . -B $(FUZZ_BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DTIRESIAS_FUZZ=ON

fuzz-build: fuzz-configure
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz: fuzz-build
	cd $(FUZZ_BUILD) && FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --output-on-failure -j $(JOBS)

demo: build
	./$(BUILD)/tiresias demo

# BENCH_FILTER: a regex of the benchmarks to run (Google Benchmark's --benchmark_filter), e.g.
# `make bench BENCH_FILTER=-Slurm` leaves out the ones that bring up a local Slurm cluster.
bench: build
	./$(BUILD)/tiresias_bench $(if $(BENCH_FILTER),--benchmark_filter='$(BENCH_FILTER)')

# The binaries, the man page, bash and zsh completions and the docs under $(PREFIX)
# (DESTDIR honoured, as for packaging).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
