#!/bin/bash
# Every test: the x86_64 and arm64 test kernels and the x86_64 debug kernel
# (KASAN, lockdep, DEBUG_VM, DEBUG_LIST), each booted in QEMU to run its
# KUnit suites and the in-guest tests, plus the workbench's own checks.
# Prints what it does as it goes and ends with "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
# ARCH:CFG pairs to run, e.g. TEST_CONFIGS="x86_64:test" for a quick run.
configs=${TEST_CONFIGS:-x86_64:test arm64:test x86_64:debug}
mkdir -p "$build/logs"

# Boot parameters and what thp_policy_boot must find (see its source).
boot_params=(
	"transparent_hugepage=defer thp_anon=64K:auto thpscan.expect_global=defer thpscan.expect_64kB=auto thpscan.expect_2048kB=never"
	"transparent_hugepage=auto thp_anon=2M:defer;32K:defer thpscan.expect_global=auto thpscan.expect_2048kB=defer thpscan.expect_32kB=defer"
	"transparent_hugepage=sometimes thp_anon=64K:bogus thpscan.expect_global=always thpscan.expect_64kB=never thpscan.expect_log=transparent_hugepage=sometimes+cannot+parse thpscan.expect_log=thp_anon=64K:bogus:+error+parsing"
	# One bad entry after good ones: thp_anon= is ignored as a whole, the
	# sizes the good entries set are back at their defaults.
	"transparent_hugepage=always thp_anon=16K,32K:always;2M:defer;64K:bogus thpscan.expect_global=always thpscan.expect_16kB=never thpscan.expect_32kB=never thpscan.expect_64kB=never thpscan.expect_2048kB=inherit thpscan.expect_log=invalid+policy+bogus+in+thp_anon+boot+parameter thpscan.expect_log=thp_anon=16K,32K:always;2M:defer;64K:bogus:+error+parsing+string,+ignoring+setting"
)

# Boots that run one *_boot program with boot parameters of its own:
# "PROGRAM PARAMETERS".
boot_programs=(
	# No memory controller: THPs go to the per-node thp_scan queues.
	"thp_scan_node_boot cgroup_disable=memory"
)

passed=0 failed=0 skipped=0
t0=$(date +%s)
step() { echo "== [$(date +%T), +$(($(date +%s) - t0)) s] $*"; }
count() { # count FILE: add "passed failed skipped"
	local p f s
	read -r p f s < "$1"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}
check() { # check NAME OK?
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "workbench: ok: $1"
	else
		failed=$((failed + 1)); echo "workbench: FAIL: $1"
	fi
}
finish() {
	step "done"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
	exit
}

step "assembling the kernel tree"
if ! "$W/tree.sh"; then
	check "assemble the tree" 1
	finish
fi

for c in $configs; do
	arch=${c%%:*} cfg=${c#*:}
	step "building the $arch-$cfg kernel (log: build/logs/build-$arch-$cfg.log)"
	if ! "$W/build-kernel.sh" "$arch" "$cfg" > "$build/logs/build-$arch-$cfg.log" 2>&1; then
		tail -n 40 "$build/logs/build-$arch-$cfg.log"
		check "build the $arch-$cfg kernel" 1
		continue
	fi
	tail -n 1 "$build/logs/build-$arch-$cfg.log"
	step "building the $arch test programs"
	if ! "$W/build-tests.sh" "$arch"; then
		check "build the $arch test programs" 1
		continue
	fi
	step "booting $arch-$cfg (console: build/logs/$arch-$cfg/console.log)"
	timeout=600
	[ "$cfg" = debug ] && timeout=1800
	"$top/qemu/boot.sh" --arch "$arch" --cfg "$cfg" --timeout "$timeout"
	if [ -f "$build/logs/$arch-$cfg/counts" ]; then
		count "$build/logs/$arch-$cfg/counts"
	else
		check "boot $arch-$cfg" 1
	fi
	[ "$cfg" = test ] || continue
	# The THP policy boot parameters, good and bad, one boot each.
	n=0
	for params in "${boot_params[@]}"; do
		n=$((n + 1))
		step "booting $arch-$cfg with: ${params%% thpscan.*}"
		"$top/qemu/boot.sh" --arch "$arch" --cfg "$cfg" --name "$arch-boot$n" \
			--tests thp_policy_boot --append "$params" --timeout 300 --quiet
		if [ -f "$build/logs/$arch-boot$n/counts" ]; then
			count "$build/logs/$arch-boot$n/counts"
		else
			check "boot $arch-boot$n" 1
		fi
	done
	for entry in "${boot_programs[@]}"; do
		prog=${entry%% *} params=${entry#* }
		step "booting $arch-$cfg with $params for $prog"
		"$top/qemu/boot.sh" --arch "$arch" --cfg "$cfg" --name "$arch-$prog" \
			--tests "$prog" --append "$params" --timeout 300 --quiet
		if [ -f "$build/logs/$arch-$prog/counts" ]; then
			count "$build/logs/$arch-$prog/counts"
		else
			check "boot $arch-$prog" 1
		fi
	done
done

step "static checks (checkpatch, kernel-doc, sparse, coccicheck)"
"$W/check.sh" > "$build/logs/check.out" 2>&1
cat "$build/logs/check.out"
while read -r line; do
	case "$line" in
	"check: "*": clean") check "${line%: clean}" 0 ;;
	"check: "*) check "${line%: findings above}" 1 ;;
	esac
done < <(grep '^check: ' "$build/logs/check.out")

step "workbench checks"
# The result parser, on a fixture whose counts are known.
out=$(python3 "$top/qemu/results.py" --name selfcheck --tree "$build/linux" \
	--expect-kunit "fixture thp_scan" --expect-tests "prog_a prog_b prog_c prog_d" \
	"$W/selfcheck")
rc=$?
echo "$out" | tail -n 1
[ $rc = 1 ] && echo "$out" | grep -qx 'selfcheck: 3 passed, 8 failed, 1 skipped (0 s)'
check "results.py counts the failures of the fixture" $?

# A kernel WARNING fails a run whose tests all pass: LKDTM provokes one.
if [ -f "$build/obj/x86_64-test/arch/x86/boot/bzImage" ]; then
	"$top/qemu/boot.sh" --arch x86_64 --cfg test --name selfcheck-warning --tests none --quiet \
		--cmd 'echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT' > "$build/logs/selfcheck-warning.out"
	rc=$?
	[ $rc = 1 ] && grep -q 'FAIL console: kernel reports' "$build/logs/selfcheck-warning.out" &&
		grep -q 'WARNING:' "$build/logs/selfcheck-warning.out"
	check "a kernel WARNING in the console fails the run" $?
fi
cd "$top"
finish
