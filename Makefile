# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine:
# they install the Debian packages the build needs, configure, build and run.
# slurm-wlm and munge are for the Slurm executor's end-to-end tests and benchmark, which
# bring up a private Slurm cluster on this machine (scripts/slurm_up.sh; they need root).
BUILD ?= build
JOBS ?= $(shell nproc)
APT_PACKAGES := build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev \
  libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libsqlite3-dev \
  libssl-dev libmicrohttpd-dev libcurl4-openssl-dev \
  slurm-wlm munge

.PHONY: deps configure build test demo bench clean format

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

configure: deps
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	./$(BUILD)/tiresias demo

bench: build
	./$(BUILD)/tiresias_bench

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD)
