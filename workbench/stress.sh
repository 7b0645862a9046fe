#!/bin/bash
# The long stress (make stress): thp_scan_stress for STRESS_SECONDS
# (default 600) in the debug kernels of both architectures (KASAN, lockdep,
# DEBUG_VM, DEBUG_LIST, kmemleak, fault injection: configs/debug.config),
# with two NUMA nodes and two CPUs, one of which goes offline and online
# again and again (CPU hotplug).  Each kernel boots twice: once as it is,
# once with page and slab allocations failing at STRESS_FAIL_PCT percent
# (default 1) in the workers, kthpscand, khugepaged and kswapd
# (thpscan.stress_fail=).  `make test` runs the same program for 30 s in
# every boot, with the fault injection in the x86_64 debug kernel's.
#
# A boot passes when every checksum verifies, every knob write did what it
# must, every CPU went offline and online when asked, the workers' memory
# is gone afterwards, kmemleak found nothing, and the console has no
# KASAN, lockdep, WARNING, BUG, "Bad page" or RCU stall report
# (qemu/results.py).  The end is a table of what each boot did (from the
# program's "stress-summary" line: its counters are system-wide, but the
# stress is all the guest runs) and of what it found.
#
# STRESS_CONFIGS="x86_64:debug arm64:debug" and STRESS_FAIL="0 1" (0: no
# injection, 1: with it) choose the boots.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
seconds=${STRESS_SECONDS:-600}
configs=${STRESS_CONFIGS:-x86_64:debug arm64:debug}
fails=${STRESS_FAIL:-0 1}
pct=${STRESS_FAIL_PCT:-1}
mkdir -p "$build/logs"
t0=$(date +%s) rc=0 names=()
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
	for f in $fails; do
		name=stress-$arch-$cfg append="thpscan.stress_seconds=$seconds" how=
		if [ "$f" = 1 ]; then
			name=$name-fail append="$append thpscan.stress_fail=$pct"
			how=", allocations failing at $pct %"
		fi
		step "thp_scan_stress for $seconds s in $arch-$cfg$how (console: build/logs/$name/console.log)"
		names+=("$name")
		# The program's own run, its checks and the boot, with room to spare.
		"$top/qemu/boot.sh" --name "$name" --arch "$arch" --cfg "$cfg" \
			--tests thp_scan_stress --append "$append" --numa 2 --smp 2 \
			--timeout $((seconds * 3 + 900)) --test-timeout $((seconds * 3 + 600)) || rc=1
	done
done
step "done"
python3 "$W/stress-table.py" "$build/logs" "${names[@]}"
[ "$rc" = 0 ] && echo "stress: passed" || echo "stress: FAILED"
exit "$rc"
