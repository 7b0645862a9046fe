#!/bin/bash
# make flake-hunt: boot each kernel once and run every in-guest
# thp_scan_* and thp_policy_* program (the *_boot ones excepted: they need
# boots of their own) FLAKE_N times over in that boot, then print, per
# kernel, a table: program, runs, failures, first failure line
# (qemu/flakes.py).  On demand, not part of make test: 20 rounds take about
# an hour per test kernel and several on the debug kernel.
#
#   FLAKE_N=20                                          rounds per boot
#   FLAKE_CONFIGS="x86_64:test arm64:test x86_64:debug"  the kernels
#   FLAKE_PROGRAMS="thp_scan_split ..."                  default: all of them
#   FLAKE_NEIGHBOUR=1                                    workbench/guest/
#       thp_neighbour runs beside the programs: another task's sparse and
#       partially mapped THPs, which a test that reads only its own pfns,
#       memcg and pids is not confused by (logs: flake-ARCH-CFG-neighbour)
#
# Each program has the time limit of the test command (450 s, debug
# kernel 900 s); the boot has ROUND_LIMIT seconds per round (test kernels
# 600, debug 1800: the programs take about 110 s a round on an idle
# x86_64-test guest).  Logs: build/logs/flake-ARCH-CFG/.  Exits 1 if any
# run failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
n=${FLAKE_N:-20}
configs=${FLAKE_CONFIGS:-x86_64:test arm64:test x86_64:debug}
mkdir -p "$build/logs"
t0=$(date +%s)
step() { echo "== [$(date +%T), +$(($(date +%s) - t0)) s] $*"; }
bad=0 tables=()

"$W/tree.sh" || exit 1
for c in $configs; do
	arch=${c%%:*} cfg=${c#*:}
	name=flake-$arch-$cfg nb=()
	if [ "${FLAKE_NEIGHBOUR:-0}" = 1 ]; then
		name=$name-neighbour nb=(--neighbour /tests/thp_neighbour)
	fi
	step "building the $arch-$cfg kernel (log: build/logs/build-$arch-$cfg.log)"
	if ! "$W/build-kernel.sh" "$arch" "$cfg" > "$build/logs/build-$arch-$cfg.log" 2>&1; then
		tail -n 20 "$build/logs/build-$arch-$cfg.log"
		echo "flake-hunt: $arch-$cfg: the kernel did not build"
		bad=1
		continue
	fi
	"$W/build-tests.sh" "$arch" > /dev/null || { echo "flake-hunt: $arch: test programs did not build"; bad=1; continue; }
	progs=${FLAKE_PROGRAMS:-$(tr '\n' ' ' < "$build/tests/$arch/tests.list")}
	case "$cfg" in
	test) per=600 limit=450 ;;
	*) per=1800 limit=900 ;;
	esac
	nprogs=$(echo $progs | wc -w)
	# A boot that runs fewer programs needs less per round.
	per=$((per * nprogs / $(wc -l < "$build/tests/$arch/tests.list")))
	[ "$per" -ge "$limit" ] || per=$limit
	timeout=$((n * per + 120))
	step "booting $arch-$cfg: $nprogs programs, $n rounds (limit ${timeout} s; log: build/logs/$name/)"
	"$top/qemu/boot.sh" --arch "$arch" --cfg "$cfg" --name "$name" --tests "$progs" \
		--rounds "$n" --timeout "$timeout" --test-timeout "$limit" --quiet "${nb[@]}" \
		> "$build/logs/$name.out" 2>&1
	rc=$?
	cat "$build/logs/$name.out"
	[ "$rc" = 0 ] || bad=1
	tables+=("$build/logs/$name.out")
done
step "done"
for f in "${tables[@]}"; do
	echo
	cat "$f"
done
exit $bad
