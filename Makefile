# The two commands of the README: `make run` and `make test`. Both install missing Debian
# packages first (scripts/install-deps.sh, apt-get only), then build with CMake + Ninja + ccache.

BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
ARGS ?=
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test check clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCQ_BUILD_TESTS=ON $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD)

run: build
	./$(BUILD)/chronoq serve $(ARGS)

test: build check
	ctest --test-dir $(BUILD) --output-on-failure -j2

# Static checks: module layering (STYLE.md section 2) and file sizes.
check:
	@bash scripts/check-layering.sh

clean:
	rm -rf $(BUILD)
