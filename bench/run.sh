#!/bin/bash
# The benchmark: stock Linux 6.12 against the patched kernel, every THP
# policy, side by side (make bench, ./run bench [--quick]).
#
#   bench/run.sh [--quick] [--arm64] [--jobs N] [--only "BOOT ..."] [--out NAME]
#
# Builds the patched x86_64 kernel (configs: base + x86_64 + bench, i.e.
# the test configuration plus CONFIG_NET and CONFIG_UNIX for redis and
# CONFIG_SCHEDSTATS for the idle cost) and stock 6.12 from the same
# Debian tarball and fragments (build/stock/, no overlay, no patches,
# without the options only the series has),
# builds the guest programs (bench/guest/, static), and boots each kernel
# under QEMU with -icount shift=0,sleep=off -smp 1: guest time counts
# instructions (1 ns each), so times are repeatable and do not depend on
# the host's load, and idle guest time costs no host time.  Boots:
#   fault-{patched,stock}          fault cost per folio size
#   idle-{patched,stock}           CPU time of an idle machine, with 0 and
#                                  2000 empty memcgs, thp_scan off and on
#   locks-{patched,stock}          lock acquisitions and contentions of the
#                                  fault and free paths, on kernels with
#                                  CONFIG_LOCK_STAT (x86_64-bench+lockstat,
#                                  configs/lockstat.config), four CPUs
#   {patched,stock}-POLICY         the memory workloads under POLICY
#                                  (patched: never madvise always defer
#                                  auto; stock: never madvise always)
#   dense-{patched,stock}          2 MiB THPs partly written (25, 50 and
#                                  75 %, in runs or spread): memory and
#                                  what stays in large folios
#   rounds-{patched,stock}         a program mapping 4 MiB every 2 s,
#                                  1 % or all of it written, or 1 % then
#                                  all (the fault feedback, issue 22)
# --arm64 adds the same kernels for arm64 (QEMU virt, -cpu max) and boots
# fault-{patched,stock}-arm64, idle-{patched,stock}-arm64,
# dense-{patched,stock}-arm64, rounds-{patched,stock}-arm64 and
# {patched,stock}-always-arm64, redis
# included: Debian's arm64 redis-server and redis-benchmark with their
# libraries, which workbench/install-deps.sh unpacks (not installs) into
# /var/cache/thp-scan/redis-arm64 (qemu/boot.sh --root-files).
# N boots run at once (default 2).  Then bench/report.py writes the
# table, the plots and the run's facts to bench/results/ (--quick:
# bench/results/quick/, --only: bench/results/only/).  Logs: build/logs/bench-*/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
quick=0 arm64=0 jobs=${BENCH_JOBS:-2} only= outname=
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--arm64) arm64=1 ;;
	--jobs) jobs=$2; shift ;;
	--only) only=$2; shift ;;
	--out) outname=$2; shift ;;
	*) echo "bench: unknown option $1 (bench/run.sh [--quick] [--arm64] [--jobs N] [--only \"BOOT ...\"] [--out NAME])" >&2; exit 2 ;;
	esac
	shift
done
# A full run of every boot also puts its headline tables into README.md;
# a run of some boots (--only) writes its own report, next to the full
# run's: bench/results/only/, or bench/results/NAME/ with --out NAME.
out=$top/bench/results readme=$top/README.md
[ -n "$only" ] && out=$top/bench/results/only readme=
[ "$quick" = 1 ] && out=$top/bench/results/quick readme=
case "$outname" in
"") ;;
*[!a-z0-9-]*) echo "bench: --out takes a name of lower-case letters, digits and dashes" >&2; exit 2 ;;
*) out=$top/bench/results/$outname readme= ;;
esac
t0=$(date +%s)
step() { echo "== bench [$(date +%T), +$(($(date +%s) - t0)) s] $*"; }
die() { echo "bench: error: $*" >&2; exit 1; }
mkdir -p "$build/logs" "$build/bench"

# --- the boots ------------------------------------------------------------
# NAME KERNEL MODE POLICY ESTIMATE_S ARCH (wall-clock, measured on 2 cores
# with two boots at a time; the guest's own times do not depend on it).
if [ "$quick" = 1 ]; then
	est_mem=90 est_always=110 est_fault=50 est_idle=80 est_locks=60 est_dense=60 est_rounds=120
else
	est_mem=200 est_always=240 est_fault=70 est_idle=120 est_locks=120 est_dense=120 est_rounds=240
fi
boots=()
for k in patched stock; do
	boots+=("fault-$k $k fault always $est_fault x86_64")
done
for k in patched stock; do
	boots+=("idle-$k $k idle always $est_idle x86_64")
done
for k in patched stock; do
	boots+=("locks-$k $k locks always $est_locks x86_64")
done
for p in always never madvise defer auto; do
	for k in patched stock; do
		[ "$k" = stock ] && case "$p" in defer|auto) continue ;; esac
		e=$est_mem
		[ "$p" = always ] && e=$est_always
		boots+=("$k-$p $k mem $p $e x86_64")
	done
done
for k in patched stock; do
	boots+=("dense-$k $k dense always $est_dense x86_64")
done
for k in patched stock; do
	boots+=("rounds-$k $k rounds always $est_rounds x86_64")
done
if [ "$arm64" = 1 ]; then
	for k in patched stock; do
		boots+=("dense-$k-arm64 $k dense always $((est_dense * 2)) arm64")
		boots+=("fault-$k-arm64 $k fault always $((est_fault * 2)) arm64")
		boots+=("idle-$k-arm64 $k idle always $((est_idle * 2)) arm64")
		boots+=("$k-always-arm64 $k mem always $((est_always * 2)) arm64")
		boots+=("rounds-$k-arm64 $k rounds always $((est_rounds * 2)) arm64")
	done
fi
if [ -n "$only" ]; then
	sel=()
	for b in "${boots[@]}"; do
		case " $only " in *" ${b%% *} "*) sel+=("$b") ;; esac
	done
	boots=("${sel[@]}")
fi
locks=0
for b in "${boots[@]}"; do
	case "$b" in locks-*) locks=1 ;; esac
done

# --- kernels ------------------------------------------------------------
step "kernel trees: patched (build/linux) and stock (build/stock/linux)"
"$top/workbench/tree.sh" || die "assembling build/linux failed"
"$top/bench/stock-tree.sh" || die "unpacking the stock tree failed"
step "building the patched x86_64-bench kernel (log: build/logs/bench-build-patched.log; ~4 min with a warm ccache, more when cold)"
"$top/workbench/build-kernel.sh" x86_64 bench > "$build/logs/bench-build-patched.log" 2>&1 ||
	{ tail -n 30 "$build/logs/bench-build-patched.log"; die "the patched kernel did not build"; }
tail -n 1 "$build/logs/bench-build-patched.log"
step "building the stock x86_64-bench kernel (log: build/logs/bench-build-stock.log)"
BUILD=$build/stock "$top/workbench/build-kernel.sh" x86_64 bench > "$build/logs/bench-build-stock.log" 2>&1 ||
	{ tail -n 30 "$build/logs/bench-build-stock.log"; die "the stock kernel did not build"; }
grep '^build-kernel: stock tree' "$build/logs/bench-build-stock.log"
tail -n 1 "$build/logs/bench-build-stock.log"
if [ "$locks" = 1 ]; then
	step "building the patched and stock x86_64-bench+lockstat kernels (logs: build/logs/bench-build-{patched,stock}-lockstat.log)"
	"$top/workbench/build-kernel.sh" x86_64 bench+lockstat > "$build/logs/bench-build-patched-lockstat.log" 2>&1 ||
		{ tail -n 30 "$build/logs/bench-build-patched-lockstat.log"; die "the patched lockstat kernel did not build"; }
	tail -n 1 "$build/logs/bench-build-patched-lockstat.log"
	BUILD=$build/stock "$top/workbench/build-kernel.sh" x86_64 bench+lockstat > "$build/logs/bench-build-stock-lockstat.log" 2>&1 ||
		{ tail -n 30 "$build/logs/bench-build-stock-lockstat.log"; die "the stock lockstat kernel did not build"; }
	tail -n 1 "$build/logs/bench-build-stock-lockstat.log"
fi
if [ "$arm64" = 1 ]; then
	step "building the patched and stock arm64-bench kernels (logs: build/logs/bench-build-{patched,stock}-arm64.log)"
	"$top/workbench/build-kernel.sh" arm64 bench > "$build/logs/bench-build-patched-arm64.log" 2>&1 ||
		{ tail -n 30 "$build/logs/bench-build-patched-arm64.log"; die "the patched arm64 kernel did not build"; }
	tail -n 1 "$build/logs/bench-build-patched-arm64.log"
	BUILD=$build/stock "$top/workbench/build-kernel.sh" arm64 bench > "$build/logs/bench-build-stock-arm64.log" 2>&1 ||
		{ tail -n 30 "$build/logs/bench-build-stock-arm64.log"; die "the stock arm64 kernel did not build"; }
	tail -n 1 "$build/logs/bench-build-stock-arm64.log"
fi
declare -A image=(
	["patched x86_64"]=$build/obj/x86_64-bench/arch/x86/boot/bzImage
	["stock x86_64"]=$build/stock/obj/x86_64-bench/arch/x86/boot/bzImage
	["patched arm64"]=$build/obj/arm64-bench/arch/arm64/boot/Image
	["stock arm64"]=$build/stock/obj/arm64-bench/arch/arm64/boot/Image
	["patched x86_64 locks"]=$build/obj/x86_64-bench+lockstat/arch/x86/boot/bzImage
	["stock x86_64 locks"]=$build/stock/obj/x86_64-bench+lockstat/arch/x86/boot/bzImage
)

# --- guest programs and redis -------------------------------------------
step "building the guest programs (bench/guest/*.c, static)"
gdir=$build/bench/guest
for a in x86_64 $([ "$arm64" = 1 ] && echo arm64); do
	d=$gdir cc=gcc
	[ "$a" = arm64 ] && d=$gdir-arm64 cc=aarch64-linux-gnu-gcc
	mkdir -p "$d"
	for src in "$top"/bench/guest/*.c; do
		p=$(basename "$src" .c)
		if [ ! -x "$d/$p" ] || [ "$src" -nt "$d/$p" ]; then
			$cc -static -O2 -Wall -o "$d/$p" "$src" || die "$src did not build for $a"
		fi
	done
done
files_arm64=(--file "$gdir-arm64/thpbench" --file "$gdir-arm64/ccjob" --file "$top/bench/guest/bench.sh")
redis_arm64=${BB_ARM64_DIR:-/var/cache/thp-scan}/redis-arm64
if [ "$arm64" = 1 ]; then
	[ -x "$redis_arm64/usr/bin/redis-server" ] ||
		die "$redis_arm64 is missing (run: workbench/install-deps.sh)"
	files_arm64+=(--root-files "$redis_arm64")
fi
files=(--file "$gdir/thpbench" --file "$gdir/ccjob" --file "$top/bench/guest/bench.sh")
# Debian's redis-server and redis-benchmark with their shared libraries
# and the dynamic loader, at the paths the binaries ask for.
for b in /usr/bin/redis-server /usr/bin/redis-benchmark; do
	[ -x "$b" ] || die "$b is missing (run: workbench/install-deps.sh)"
	files+=(--file "$(readlink -f "$b"):$b")
done
libs=$(ldd /usr/bin/redis-server /usr/bin/redis-benchmark | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
for l in $libs; do
	files+=(--file "$(readlink -f "$l"):$l")
done
redis_version=$(dpkg-query -W -f='${Version}' redis-server 2>/dev/null || echo unknown)

total=0
for b in "${boots[@]}"; do
	set -- $b
	total=$((total + $5))
done
est=$((total / jobs + 60))
step "${#boots[@]} boots, $jobs at a time: about $((est / 60)) min from here ($([ "$quick" = 1 ] && echo quick || echo full) run)"

# boot NAME KERNEL MODE POLICY ARCH: one guest, quietly; its log folder
# is build/logs/bench-NAME.
boot_one() {
	local name=$1 k=$2 mode=$3 pol=$4 arch=$5 limit=1500 smp=1 img
	local f=("${files[@]}")
	img=${image[$k $arch]}
	# The lock boots: the lockstat kernel, four CPUs (under -icount one
	# host thread runs them in turn).
	[ "$mode" = locks ] && img=${image[$k $arch locks]} smp=4
	[ "$arch" = arm64 ] && f=("${files_arm64[@]}")
	[ "$quick" = 1 ] && limit=900
	EXPECT_KUNIT= "$top/qemu/boot.sh" --arch "$arch" --kernel "$img" --name "bench-$name" \
		--tests none --icount shift=0,sleep=off --smp $smp --mem 1024 \
		--timeout $limit --append "kunit.enable=0" --quiet "${f[@]}" \
		--cmd "KERNEL=$k POLICY=$pol MODE=$mode QUICK=$quick sh /extra/bench.sh" \
		> "$build/logs/bench-$name.out" 2>&1
	echo $? > "$build/logs/bench-$name.rc"
}

declare -A pids=() seen=()
queue=("${boots[@]}")
done_est=0
while [ ${#queue[@]} -gt 0 ] || [ ${#pids[@]} -gt 0 ]; do
	while [ ${#pids[@]} -lt "$jobs" ] && [ ${#queue[@]} -gt 0 ]; do
		set -- ${queue[0]}
		queue=("${queue[@]:1}")
		rm -f "$build/logs/bench-$1.rc"
		mkdir -p "$build/logs/bench-$1"
		: > "$build/logs/bench-$1/results.log"
		step "boot $1: $2 $6 kernel, $3 workloads, THP policy $4 (about $(($5 / 60 + 1)) min)"
		boot_one "$1" "$2" "$3" "$4" "$6" &
		pids[$1]="$! $5"
		seen[$1]=0
	done
	sleep 5
	for n in "${!pids[@]}"; do
		log=$build/logs/bench-$n/results.log
		# What the guest says it is doing, as it goes.
		lines=$(grep -a '^BENCH-\(PROGRESS\|ERROR\|SKIP\)' "$log" 2>/dev/null)
		cnt=$(printf '%s' "$lines" | grep -c . || true)
		if [ "$cnt" -gt "${seen[$n]}" ]; then
			printf '%s\n' "$lines" | tail -n +$((seen[$n] + 1)) | sed "s/^BENCH-PROGRESS /   [$n] /; s/^BENCH-/   [$n] /"
			seen[$n]=$cnt
		fi
		set -- ${pids[$n]}
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			done_est=$((done_est + $2))
			rc=$(cat "$build/logs/bench-$n.rc" 2>/dev/null || echo '?')
			left=$(( (total - done_est) / jobs ))
			step "boot $n finished (exit status $rc): $(tail -n 1 "$build/logs/bench-$n.out"); about $((left / 60 + 1)) min left"
			unset "pids[$n]"
		fi
	done
done

# --- the report ------------------------------------------------------------
step "report: $out"
mkdir -p "$out"
names=()
for b in "${boots[@]}"; do names+=("${b%% *}"); done
python3 "$top/bench/report.py" --logs "$build/logs" --out "$out" --boots "${names[*]}" \
	--quick "$quick" --seconds $(($(date +%s) - t0)) --redis-version "$redis_version" \
	--patched-config "$build/obj/x86_64-bench/.config" \
	--stock-config "$build/stock/obj/x86_64-bench/.config" \
	--tree "$build/linux" ${readme:+--readme "$readme"} --only "$only" || die "bench/report.py failed"
failed=
for n in "${names[@]}"; do
	[ "$(cat "$build/logs/bench-$n.rc" 2>/dev/null)" = 0 ] || failed="$failed $n"
done
step "done in $(( ($(date +%s) - t0) / 60 )) min $(( ($(date +%s) - t0) % 60 )) s: $out/README.md"
if [ -n "$failed" ]; then
	echo "bench: boots that did not end cleanly (see build/logs/bench-NAME.out):$failed"
	exit 1
fi
