# Run in the guest by `make demo` (busybox sh): the thp_scan knobs, then a
# sparse THP workload.
T=/sys/kernel/mm/transparent_hugepage
echo "== kernel: $(uname -r) $(uname -m), $(grep MemTotal /proc/meminfo)"
echo "== THP policy: enabled: $(cat $T/enabled)"
echo "== thp_scan knobs in $T/thp_scan/:"
for f in $T/thp_scan/*; do echo "   $(basename $f) = $(cat $f)"; done
echo "== writing a bad value is refused and changes nothing:"
echo 2 > $T/thp_scan/enabled || echo "   (echo 2 > enabled refused)"
echo "   enabled = $(cat $T/thp_scan/enabled)"
echo "== a sparse workload: 64 MiB, 4 KiB written per 2 MiB"
/tests/thp_sparse 64 4
echo "== the same with THP off (enabled=never):"
echo never > $T/enabled
/tests/thp_sparse 64 4
echo always > $T/enabled
echo "== /proc/vmstat:"
grep -E '^thp_(fault_alloc|split_page|deferred_split_page|underused_split_page) ' /proc/vmstat | sed 's/^/   /'
