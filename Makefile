# The two commands of the README: `make run` and `make test`. Both install missing Debian
# packages first (scripts/install-deps.sh, apt-get only), then build with CMake + Ninja + ccache.

BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
ARGS ?=
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

FUZZ_SECONDS ?= 20

.PHONY: all deps configure build run test check format clean install fuzz sanitize

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCQ_BUILD_TESTS=ON -DCQ_BUILD_BENCHMARKS=ON $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD)

# Builds only what it runs (the chronoq binary, not the tests and benchmarks), then serves.
run: configure
	@cmake --build $(BUILD) --target chronoq
	./$(BUILD)/chronoq serve $(ARGS)

# ctest runs with TMPDIR in $(BUILD)/test-tmp and fails when a passing run left anything there
# (scripts/ctest-tmp.sh).
test: build check
	@date -u +'test: ctest from %T'
	bash scripts/ctest-tmp.sh $(BUILD) ctest --test-dir $(BUILD) --output-on-failure -j2
	@date -u +'test: fuzz from %T'
	bash scripts/fuzz.sh $(FUZZ_SECONDS)
	@date -u +'test: sanitizers from %T'
	bash scripts/sanitize.sh
	@date -u +'test: done at %T'

# The unit, contract and integration tests under ASan + UBSan, the engine and HTTP tests under TSan
# (docs/testing.md): g++ builds in build-asan and build-tsan.
sanitize: deps
	bash scripts/sanitize.sh

# The libFuzzer targets (docs/fuzzing.md): clang-14 build in build-fuzz, FUZZ_SECONDS per target.
fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# Installs the binary, the sample config and the systemd unit under $(PREFIX) (DESTDIR honoured):
# cmake --install, rules in cmake/CqInstall.cmake.
install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

# Static checks: module layering (STYLE.md section 2), file sizes, formatting (.clang-format),
# locking (clang -Wthread-safety over every library and the binary, in build-tsa; docs/testing.md).
check: deps
	@bash scripts/check-layering.sh
	@clang-format --dry-run -Werror $$(git ls-files '*.h' '*.cc') && echo "format: ok"
	@bash scripts/thread-safety.sh

# Rewrites every source file in the house format.
format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf $(BUILD) build-fuzz build-asan build-tsan build-tsa
