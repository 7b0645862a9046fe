#!/bin/bash
# The long stress (make stress): thp_scan_stress for STRESS_SECONDS
# (default 600) in the x86_64 debug kernel (KASAN, lockdep, DEBUG_VM,
# DEBUG_LIST) and in the arm64 test kernel, both with two NUMA nodes.
# `make test` runs the same program for 30 s in every boot.  Passes when
# every checksum verifies, every knob write did what it must, the
# workers' memory is gone afterwards and the console has no KASAN,
# lockdep, WARNING, BUG, "Bad page" or RCU stall report (qemu/results.py).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
seconds=${STRESS_SECONDS:-600}
configs=${STRESS_CONFIGS:-x86_64:debug arm64:test}
mkdir -p "$build/logs"
t0=$(date +%s) rc=0
step() { echo "== [$(date +%T), +$(($(date +%s) - t0)) s] $*"; }

step "assembling the kernel tree"
"$W/tree.sh" || exit 1
for c in $configs; do
	arch=${c%%:*} cfg=${c#*:}
	step "building the $arch-$cfg kernel (log: build/logs/build-$arch-$cfg.log)"
	if ! "$W/build-kernel.sh" "$arch" "$cfg" > "$build/logs/build-$arch-$cfg.log" 2>&1; then
		tail -n 40 "$build/logs/build-$arch-$cfg.log"
		rc=1
		continue
	fi
	"$W/build-tests.sh" "$arch" || { rc=1; continue; }
	step "thp_scan_stress for $seconds s in $arch-$cfg (console: build/logs/stress-$arch-$cfg/console.log)"
	# The program's own run, its checks and the boot, with room to spare.
	"$top/qemu/boot.sh" --name "stress-$arch-$cfg" --arch "$arch" --cfg "$cfg" \
		--tests thp_scan_stress --append "thpscan.stress_seconds=$seconds" \
		--timeout $((seconds * 3 + 600)) --test-timeout $((seconds * 3 + 300)) || rc=1
done
step "done"
[ "$rc" = 0 ] && echo "stress: passed" || echo "stress: FAILED"
exit "$rc"
