# thp_scan workbench: the one entry point.  See README.md.
#
#   make demo                 build the x86_64 test kernel, boot it, show thp_scan
#   make test                 every test, x86_64 + arm64 + the x86_64 debug kernel
#                             (the debug kernel's boot without thp_policy_fault
#                             and thp_scan_collapse)
#   make test-full            the same, the debug kernel's boot with every program
#   make tree                 assemble build/linux (tarball + overlay + quilt)
#   make kernel ARCH=.. CFG=..   one kernel (ARCH x86_64|arm64, CFG test|debug)
#   make boot ARCH=.. CFG=..  boot it and run the in-guest tests
#                             (BOOT_ARGS="--cmd ... --file ... --append ..." adds more)
#   make stress               thp_scan_stress for 10 minutes, x86_64-debug + arm64
#   make selftests-matrix     the upstream mm THP selftests, x86_64 + arm64,
#                             under always, defer and auto
#   make flake-hunt           boot each kernel once, run every in-guest thp_scan/
#                             thp_policy program FLAKE_N times (default 20) in it,
#                             print program, runs, failures, first failure line
#                             (FLAKE_CONFIGS="x86_64:test ...", FLAKE_PROGRAMS=...)
#   make series               the series for linux-mm: git format-patch output with
#                             a cover letter in build/series/, checked to apply with
#                             git am to the pristine tree (build/series-git)
#   make check-series         build the series patch by patch (x86_64; THP_SCAN=n
#                             and arm64 every fifth and last), checkpatch, W=1,
#                             sparse, kernel-doc, coccicheck, htmldocs: a table
#   make kunit-run ARCH=..    kunit.py run on the assembled tree
#   make quilt ARGS="..."     quilt in build/linux with the project's settings
#   make bench                the benchmark: stock 6.12 against the patched kernel,
#                             every THP policy (BENCH_ARGS=--quick: the short run);
#                             results in bench/results/
#   make clean                remove build/ (the ccache is kept)

ARCH ?= x86_64
CFG ?= test
BOOT_ARGS ?=
ARGS ?=
BENCH_ARGS ?=

W := workbench

.PHONY: all deps tree kernel tests boot demo test test-full flake-hunt stress selftests-matrix series check-series bench kunit-run quilt clean

all: demo

deps:
	@$(W)/install-deps.sh

tree: deps
	@$(W)/tree.sh

kernel: tree
	@$(W)/build-kernel.sh $(ARCH) $(CFG)

tests: tree
	@$(W)/build-tests.sh $(ARCH)

boot: kernel tests
	@qemu/boot.sh --arch $(ARCH) --cfg $(CFG) $(BOOT_ARGS)

demo: deps
	@$(W)/demo.sh

test: deps
	@$(W)/test.sh

test-full: deps
	@TEST_FULL=1 $(W)/test.sh

flake-hunt: deps
	@$(W)/flake-hunt.sh

stress: deps
	@$(W)/stress.sh

selftests-matrix: deps
	@$(W)/selftests-matrix.sh

series: deps
	@$(W)/series.sh

check-series: deps
	@$(W)/check-series.sh

bench: deps
	@bench/run.sh $(BENCH_ARGS)

kunit-run: tree
	@$(W)/kunit-run.sh $(ARCH)

quilt: tree
	@cd build/linux && QUILTRC=$(CURDIR)/$(W)/quiltrc quilt $(ARGS)

clean:
	rm -rf build
