# The benchmark in the guest (busybox sh), run by qemu/init as the extra
# command of a boot that bench/run.sh starts; the boot's settings come
# first in the command, as shell variables:
#   KERNEL   patched | stock (a label, for the report)
#   POLICY   never | madvise | always | defer | auto
#   MODE     mem   the memory workloads under POLICY: sparse (m)THPs with
#                  and without memcg pressure, HawkEye's three phases,
#                  redis, the compile-style loop; with POLICY=always also
#                  kthpscand's CPU cost and swap-out (zram)
#            fault the fault cost of PMD THPs, 64K and 16K mTHPs and
#                  order-0 pages
#            idle  the CPU time an idle machine spends (/proc/schedstat),
#                  with 0 and 2000 empty memcgs, thp_scan off and on
#            dense 2 MiB THPs with 25, 50 and 75 % written, in one run
#                  from the start, in 64K runs spread evenly and in pages
#                  spread evenly, under never and always (patched: also
#                  always with thp_scan/split_keep_dense=0), every mTHP
#                  size at inherit: memory, and how much of the written
#                  memory stays in folios of 64K or more
#            locks the locks the fault and free paths take, from a kernel
#                  with CONFIG_LOCK_STAT (/proc/lock_stat): one process,
#                  then four in one memcg (a boot of four CPUs)
#            rounds a program mapping 4 MiB every 2 s (64 rounds), 1 %
#                  of each written, all of it, or 1 % then all from round
#                  32 on, under never, always and auto (patched: with
#                  thp_scan/fault_limit_secs 0 and 300): footprint, THPs
#                  and fault time per round, kthpscand's CPU
#   QUICK    1: fewer and smaller workloads (./run bench --quick)
#   ONLY     the workloads to run (default: all of the mode's)
# Each workload prints "BENCH ..." lines (bench/guest/thpbench.c) that
# bench/report.py reads from the boot's results.log; "BENCH-PROGRESS"
# lines say where the run is.  Memory is memcg memory.current.
T=/sys/kernel/mm/transparent_hugepage
B=/extra/thpbench
CG=/sys/fs/cgroup/bench
: "${KERNEL:=patched}" "${POLICY:=always}" "${MODE:=mem}" "${QUICK:=0}" "${ONLY:=}"
rc=0

progress() { echo "BENCH-PROGRESS $(cut -d' ' -f1 /proc/uptime)s $*"; }
want() { [ -z "$ONLY" ] && return 0; case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
run() { "$@" || { echo "BENCH-ERROR $* exited $?"; rc=1; }; }

# policy ORDER_KB POLICY: THPs of that size only, under that policy (the
# other sizes never: 2048 kB inherits the global policy, the mTHP sizes
# are set on their own).
policy() {
	case "$1" in
	2048)	echo "$2" > $T/enabled && echo inherit > $T/hugepages-2048kB/enabled &&
		echo never > $T/hugepages-64kB/enabled && echo never > $T/hugepages-16kB/enabled ;;
	64|16)	echo "$2" > $T/enabled && echo never > $T/hugepages-2048kB/enabled &&
		echo never > $T/hugepages-64kB/enabled && echo never > $T/hugepages-16kB/enabled &&
		echo "$2" > $T/hugepages-$1kB/enabled ;;
	4)	echo never > $T/enabled && echo never > $T/hugepages-2048kB/enabled &&
		echo never > $T/hugepages-64kB/enabled && echo never > $T/hugepages-16kB/enabled ;;
	*)	false ;;
	esac || { echo "BENCH-ERROR cannot set policy $2 for $1 kB"; rc=1; }
}
# The THP policy every other workload runs under: the global one, the
# sizes at their defaults (PMD: inherit, 64K and 16K: never).
global_policy() { policy 2048 "$POLICY"; }

echo "BENCH info kernel=$KERNEL release=$(uname -r) policy=$POLICY mode=$MODE quick=$QUICK cpus=$(grep -c ^processor /proc/cpuinfo) memtotal_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
echo "BENCH knobs enabled=$(cat $T/enabled | tr ' ' ,) defrag=$(cat $T/defrag | tr ' ' ,) max_ptes_none=$(cat $T/khugepaged/max_ptes_none) khugepaged_sleep_ms=$(cat $T/khugepaged/scan_sleep_millisecs) khugepaged_pages=$(cat $T/khugepaged/pages_to_scan) shrink_underused=$(cat $T/shrink_underused 2>/dev/null || echo none)"
if [ -d $T/thp_scan ]; then
	kv=
	for f in $T/thp_scan/*; do kv="$kv $(basename $f)=$(cat $f | tr ' ' ,)"; done
	echo "BENCH thp_scan$kv"
fi

echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p $CG
echo +memory > $CG/cgroup.subtree_control

if [ "$MODE" = fault ]; then
	mib=64 reps=9
	[ "$QUICK" = 1 ] && reps=5
	for kb in 2048 64 16 4; do
		want "fault" || continue
		progress "fault cost, $kb kB folios: $reps x $mib MiB"
		policy $kb always
		run $B fault $kb $mib $reps
	done
	# A second pass, the same on both kernels, with thp_scan/enabled=0 on
	# the patched one ("off means stock"): what remains is on the fault
	# path whether it scans or not.  (Compare pass with pass: the page
	# allocator's state after the first pass is not that of a fresh boot.)
	[ -f $T/thp_scan/enabled ] && echo 0 > $T/thp_scan/enabled
	for kb in 2048 64 16 4; do
		want "fault" || continue
		progress "fault cost, $kb kB folios, second pass (thp_scan/enabled=0 where it exists): $reps x $mib MiB"
		policy $kb always
		run $B fault $kb $mib $reps pass2
	done
	[ -f $T/thp_scan/enabled ] && echo 1 > $T/thp_scan/enabled
	policy 2048 always
	exit $rc
fi

if [ "$MODE" = locks ]; then
	# Acquisitions of split_queue_lock and lru_lock per folio faulted and
	# freed, one process (thp_scan on: its defaults; the patched kernel a
	# second time with thp_scan/enabled=0); then four processes in one
	# memcg on four CPUs: how often one waits for another.  Lock
	# statistics slow every lock operation: the times here are not the
	# fault cost (MODE=fault is).
	reps=4 cmib=16
	[ "$QUICK" = 1 ] && reps=2
	[ -f /proc/lock_stat ] || { echo "BENCH-ERROR locks: no /proc/lock_stat (CONFIG_LOCK_STAT)"; exit 1; }
	[ -f /proc/sys/kernel/lock_stat ] && echo 1 > /proc/sys/kernel/lock_stat
	passes=on
	[ -f $T/thp_scan/enabled ] && passes="on off"
	for pass in $passes; do
		tag=none
		if [ -f $T/thp_scan/enabled ]; then
			tag=scan-$pass
			{ [ $pass = on ] && echo 1 || echo 0; } > $T/thp_scan/enabled
		fi
		for kb in 2048 64 16 4; do
			want locks || continue
			progress "locks: $kb kB folios, 1 process, $reps x 64 MiB (thp_scan: $pass)"
			policy $kb always
			run $B locks $kb 64 $reps 1 $tag
		done
	done
	[ -f $T/thp_scan/enabled ] && echo 1 > $T/thp_scan/enabled
	for kb in 64 2048; do
		want contention || continue
		progress "contention: $kb kB folios, 4 processes in one memcg, $reps x $cmib MiB each"
		policy $kb always
		run $B locks $kb $cmib $reps 4 contention
	done
	policy 2048 always
	exit $rc
fi

if [ "$MODE" = idle ]; then
	# The CPU time of an idle machine: N empty memcgs (no processes, each
	# with memory.max 64M, which the per-memcg "auto" looks at), and per
	# setting the time tasks ran (/proc/schedstat) in a window of guest
	# time after 5 s to settle (thpbench idle).  Settings: off (patched:
	# thp_scan/enabled=0; both: enabled=always), on-always and on-auto
	# (patched only: thp_scan/enabled=1, enabled=always or auto).
	counts="0 2000" secs=60
	[ "$QUICK" = 1 ] && counts="0 500" secs=20
	settings=off
	[ -f $T/thp_scan/enabled ] && settings="off on-always on-auto"
	[ "$KERNEL" = patched ] && [ ! -f $T/thp_scan/enabled ] &&
		{ echo "BENCH-ERROR idle: patched kernel without $T/thp_scan/enabled"; rc=1; }
	D=$CG/idle
	mkdir -p $D && echo +memory > $D/cgroup.subtree_control ||
		{ echo "BENCH-ERROR idle: cannot create $D"; exit 1; }
	for n in $counts; do
		want idle || continue
		progress "idle: $n empty memcgs with memory.max 64M"
		i=0
		while [ $i -lt $n ]; do
			if ! { mkdir $D/m$i && echo 64M > $D/m$i/memory.max; }; then
				echo "BENCH-ERROR idle: memcg $i of $n"
				rc=1
				break
			fi
			i=$((i + 1))
		done
		made=$i
		[ -d $D/m$made ] && rmdir $D/m$made
		for st in $settings; do
			case $st in
			off)	[ -f $T/thp_scan/enabled ] && echo 0 > $T/thp_scan/enabled
				policy 2048 always ;;
			on-always) echo 1 > $T/thp_scan/enabled; policy 2048 always ;;
			on-auto) echo 1 > $T/thp_scan/enabled; policy 2048 auto ;;
			esac
			progress "idle: $made memcgs, setting $st: 5 s to settle, then ${secs} s measured"
			run $B idle 5 $secs $made $st
		done
		i=0
		while [ $i -lt $made ]; do
			rmdir $D/m$i || { echo "BENCH-ERROR idle: rmdir $D/m$i"; rc=1; }
			i=$((i + 1))
		done
	done
	rmdir $D
	[ -f $T/thp_scan/enabled ] && echo 1 > $T/thp_scan/enabled
	policy 2048 always
	exit $rc
fi

if [ "$MODE" = dense ]; then
	# The sizes below PMD follow the global policy too, so that a split
	# may keep dense parts in any of them (split_keep_dense).
	for f in $T/hugepages-*kB/enabled; do echo inherit > $f; done
	settings="never always"
	[ -f $T/thp_scan/split_keep_dense ] && settings="never always always-keep0"
	dmib=64 dwin=30
	[ "$QUICK" = 1 ] && dmib=32 dwin=20
	for st in $settings; do
		pol=${st%-keep0}
		echo $pol > $T/enabled
		if [ -f $T/thp_scan/split_keep_dense ]; then
			[ "$st" = always-keep0 ] && echo 0 > $T/thp_scan/split_keep_dense ||
				echo 1 > $T/thp_scan/split_keep_dense
		fi
		for shape in runs spread64k spread4k; do
			for pct in 25 50 75; do
				progress "dense: $dmib MiB of 2 MiB THPs, $pct % written ($shape), ${dwin} s, $st"
				run $B dense $shape $pct $dmib $dwin $st
			done
		done
	done
	[ -f $T/thp_scan/split_keep_dense ] && echo 1 > $T/thp_scan/split_keep_dense
	progress "done"
	exit $rc
fi

# Issue 22: a program that maps 4 MiB every 2 s and writes 1 % of it,
# all of it, or 1 % then all of it from the middle on; under "never",
# "always" and (patched) "auto", each with the fault feedback off
# (fault_limit_secs 0, the default) and on (300 s) where the kernel has it.
if [ "$MODE" = rounds ]; then
	nrounds=64
	[ "$QUICK" = 1 ] && nrounds=24
	for pol in never always auto; do
		echo $pol > $T/enabled 2>/dev/null || continue
		lsets=default
		[ -f $T/thp_scan/fault_limit_secs ] && [ $pol != never ] && lsets="0 300"
		for ls in $lsets; do
			[ "$ls" = default ] || echo $ls > $T/thp_scan/fault_limit_secs
			for shape in sparse dense phase; do
				case $shape in
				sparse) pct=1 from=$nrounds ;;
				dense) pct=100 from=0 ;;
				phase) pct=1 from=$((nrounds / 2)) ;;
				esac
				progress "rounds: $nrounds rounds of 4 MiB 2 s apart, $shape, $pol, fault_limit_secs $ls"
				run $B rounds $nrounds 4 2 $pct $from $pol-$shape-$ls
			done
		done
		[ -f $T/thp_scan/fault_limit_secs ] && echo 0 > $T/thp_scan/fault_limit_secs
	done
	echo always > $T/enabled
	progress "done"
	exit $rc
fi

if [ "$QUICK" = 1 ]; then
	pcts="1 50 100" smib=32 window=40 pwindow=10 hk=192 hidle=20 nset=10000 rsamples=4 nbench=4000 njobs=30 scmib=128 scwin=30
else
	pcts="1 10 50 90 100" smib=64 window=60 pwindow=15 hk=256 hidle=20 nset=10000 rsamples=8 nbench=10000 njobs=100 scmib=256 scwin=60
fi

# 1. Sparse (m)THPs, without memcg pressure, then with (in that order: a
#    memcg throttled at memory.high stalls, and PSI, which "auto" reads,
#    is system-wide; each line says the auto state at the fault).
if want sparse; then
	for pressure in 0 1; do
		w=$window
		[ $pressure = 1 ] && w=$pwindow
		for kb in 2048 64; do
			policy $kb "$POLICY"
			for pct in $pcts; do
				progress "sparse: $smib MiB of $kb kB folios, $pct % written, ${w} s $([ $pressure = 1 ] && echo with || echo without) memcg pressure"
				run $B sparse $kb $pct $smib $w $pressure
			done
		done
	done
fi
global_policy

# 2. HawkEye's three phases in a memcg: fill, free most, idle, fill again.
if want hawkeye; then
	progress "hawkeye: memory.max $hk MiB, fill, free 80 %, ${hidle} s idle, fill again"
	run $B hawkeye $hk $hidle
fi

# 3. redis: SETs, 80 % deleted, the memcg's footprint every 30 s; then
#    redis-benchmark.
if want redis && [ ! -x /usr/bin/redis-server ]; then
	echo "BENCH-SKIP redis: no redis-server in this guest"
elif want redis; then
	progress "redis: $nset SETs of 16000 bytes, 80 % deleted, memory.current every 30 s for $((rsamples * 30)) s"
	mkdir -p $CG/redis
	rm -f /tmp/redis.sock
	(echo 0 > $CG/redis/cgroup.procs && exec /usr/bin/redis-server --port 0 \
		--unixsocket /tmp/redis.sock --save '' --appendonly no --daemonize no \
		--loglevel warning --disable-thp no --dir /tmp) &
	rpid=$!
	run $B redisload /tmp/redis.sock $nset 16000 80
	run $B sample $CG/redis 30 $rsamples redis-t
	run $B folios $rpid redis
	progress "redis-benchmark: $nbench requests per test"
	/usr/bin/redis-benchmark -s /tmp/redis.sock -n $nbench -c 8 -d 1024 -t set,get,lpush,lpop --csv 2>/dev/null |
		tr -d '"' | while IFS=, read -r test rps avg rest; do
			case "$test" in test|"") continue ;; esac
			echo "BENCH redis-bench test=$test rps=$rps avg_ms=$avg"
		done
	echo "BENCH redis-after-bench mib=$(awk '{printf "%.2f", $1 / 1048576}' $CG/redis/memory.current)"
	kill $rpid
	wait $rpid
fi

# 4. The compile-style loop: many short processes.
if want cc; then
	progress "cc: $njobs short compiler-like processes"
	run $B ccloop $njobs /extra/ccjob
fi

# 5. kthpscand's CPU cost (the patched kernel's scanner, at its defaults).
if [ "$POLICY" = always ] && want scancost; then
	progress "scancost: $scmib MiB dense THPs for ${scwin} s, then $scmib MiB sparse until recovered"
	run $B scancost $scmib $scwin
fi

# 6. Swap-out (zram) of sparse THPs, per thp_scan/split_on_swapout mode.
if [ "$POLICY" = always ] && want swap; then
	if echo 1G > /sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0; then
		if [ -f $T/thp_scan/split_on_swapout ]; then
			modes="never underused always"
		else
			echo "BENCH-SKIP swap: no $T/thp_scan/split_on_swapout in this kernel: measured as 6.12 does it (mode none)"
			modes=none
		fi
		for m in $modes; do
			[ "$m" = none ] || echo "$m" > $T/thp_scan/split_on_swapout
			for kb in 2048 64; do
				policy $kb always
				progress "swap: $smib MiB of $kb kB folios, 10 % written, pushed out (split_on_swapout: $m)"
				run $B swap $kb 10 $smib $m
			done
		done
		swapoff /dev/zram0
		echo 1 > /sys/block/zram0/reset
	else
		echo "BENCH-ERROR swap: no zram swap"
		rc=1
	fi
	global_policy
fi
progress "done"
exit $rc
