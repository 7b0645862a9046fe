# Run in the guest by `make demo` (busybox sh): the thp_scan knobs, then
# kthpscand at work on a sparse THP workload, with its default knobs and
# no memory pressure.
T=/sys/kernel/mm/transparent_hugepage
echo "== kernel: $(uname -r) $(uname -m), $(grep MemTotal /proc/meminfo)"
echo "== THP policy: enabled: $(cat $T/enabled)"
echo "== thp_scan knobs in $T/thp_scan/:"
for f in $T/thp_scan/*; do echo "   $(basename $f) = $(cat $f)"; done
echo "== writing a bad value is refused and changes nothing:"
echo 2 > $T/thp_scan/enabled || echo "   (echo 2 > enabled refused)"
echo "   enabled = $(cat $T/thp_scan/enabled)"
echo "== kthpscand: $(for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = kthpscand ] && echo "pid ${p#/proc/}, state $(cut -d' ' -f3 $p/stat)"; done)"
echo "== a sparse workload: 256 MiB (128 PMD THPs), 4 KiB written per 2 MiB,"
echo "   then 30 s idle: kthpscand splits the THPs, the zero pages are freed;"
echo "   Debian's trace-cmd records thp_scan's tracepoints and auto's meanwhile"
trace-cmd record -q -e thp_scan -e huge_memory:thp_auto_state -o /tmp/demo.dat \
	/tests/thp_sparse 256 4 30
echo "== trace-cmd report: the first decisions and splits, and how many of each:"
trace-cmd report -i /tmp/demo.dat 2>/dev/null | grep -m 4 -E 'thp_scan_(decision|split):' |
	sed 's/^ */   /'
trace-cmd report -i /tmp/demo.dat 2>/dev/null |
	awk '/ thp_scan_decision: / { for (i = 1; i <= NF; i++) if ($i ~ /^decision=/) n[$i]++ }
	     END { for (d in n) printf "   %s: %d\n", d, n[d] }'
echo "== the same with thp_scan off (what stock 6.12 does without pressure):"
echo 0 > $T/thp_scan/enabled
/tests/thp_sparse 256 4 30
echo 1 > $T/thp_scan/enabled
echo "== the same with THP off (enabled=never):"
echo never > $T/enabled
/tests/thp_sparse 256 4
echo always > $T/enabled
echo "== kthpscand CPU time: $(cat $T/thp_scan/cpu_time_ms) ms"
echo "== /proc/vmstat:"
grep -E '^thp_(fault_alloc|split_page|deferred_split_page|underused_split_page|split_scan_[a-z_]+) ' /proc/vmstat | sed 's/^/   /'
echo "== $T/hugepages-2048kB/stats/thp_split_scan_*:"
for f in $T/hugepages-2048kB/stats/thp_split_scan_*; do echo "   $(basename $f) = $(cat $f)"; done
