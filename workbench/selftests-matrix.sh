#!/bin/bash
# make selftests-matrix: the upstream mm selftests that exercise THP
# (workbench/upstream/tests), unmodified, on the x86_64 and arm64 test
# kernels under each global THP policy, always, defer and auto
# (transparent_hugepage= on the command line), one boot each, named
# ARCH-upstream-POLICY.  Ends with "N passed, N failed, N skipped" over the
# boots (results.py's counts) and exits non-zero if anything failed.
#   MATRIX_ARCHS="x86_64 arm64" MATRIX_POLICIES="always defer auto"
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
archs=${MATRIX_ARCHS:-x86_64 arm64}
policies=${MATRIX_POLICIES:-always defer auto}
mkdir -p "$build/logs"

passed=0 failed=0 skipped=0
t0=$(date +%s)
step() { echo "== [$(date +%T), +$(($(date +%s) - t0)) s] $*"; }
fail() { failed=$((failed + 1)); echo "selftests-matrix: FAIL: $*"; }

step "assembling the kernel tree"
"$W/tree.sh" || { fail "assemble the tree"; echo "$passed passed, $failed failed, $skipped skipped"; exit 1; }
for arch in $archs; do
	step "building the $arch-test kernel (log: build/logs/build-$arch-test.log)"
	if ! "$W/build-kernel.sh" "$arch" test > "$build/logs/build-$arch-test.log" 2>&1; then
		tail -n 40 "$build/logs/build-$arch-test.log"
		fail "build the $arch-test kernel"
		continue
	fi
	step "building the $arch upstream mm selftests"
	if ! "$W/build-tests.sh" "$arch" > /dev/null || ! "$W/build-upstream.sh" "$arch" 2> "$build/logs/build-upstream-$arch.log"; then
		tail -n 40 "$build/logs/build-upstream-$arch.log"
		fail "build the $arch upstream mm selftests"
		continue
	fi
	for policy in $policies; do
		name=$arch-upstream-$policy
		step "booting $arch-test with transparent_hugepage=$policy (results: build/logs/$name/results.log)"
		# 2 GiB: in a 1 GiB guest (two nodes of 512 MiB) khugepaged's
		# collapse_compound_extreme, run after the earlier programs, fails
		# to allocate a PMD THP at about 450 of its 512.  They take about
		# 2.5 minutes on x86_64 (see README.md); the limits leave room
		# for a busy host.
		"$top/qemu/boot.sh" --arch "$arch" --cfg test --name "$name" --quiet \
			--tests upstream_mm --file "$build/tests/$arch/upstream:/upstream" \
			--append "transparent_hugepage=$policy" --mem 2048 --smp 3 --timeout 2400
		if [ -f "$build/logs/$name/counts" ]; then
			read -r p f s < "$build/logs/$name/counts"
			passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		else
			fail "boot $name: no counts"
		fi
		# Each upstream program's own counts.
		grep '^\(not \)\{0,1\}ok [0-9]* upstream\.' "$build/logs/$name/results.log" | sed "s/^/  $name: /"
	done
done
step "done"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
