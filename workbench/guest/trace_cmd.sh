#!/bin/sh
# trace_cmd (guest, busybox sh, TAP): Debian's trace-cmd, the tool admins
# use, records thp_scan's and auto's tracepoints while kthpscand splits a
# sparse workload, reclaim splits THPs at swap-out in a small memcg, and
# the "auto" state changes; then
#   1. fields_parse: every event of thp_scan:* and
#      huge_memory:thp_auto_state was recorded, each record has every
#      field of its format file (trace-cmd report -R), and libtraceevent
#      prints each with the event's own format, decisions by name
#      (trace-cmd report), nothing it failed to parse;
#   2. decisions_match_counters: the recorded decisions and splits add up
#      to what the counters of /proc/vmstat and of the PMD size counted
#      over the recording: every folio judged (scanned), every page the
#      zero scan read (pages_scanned), every split as underused and at
#      swap-out.  Both sides are the whole system over the same window,
#      so another task's THPs would move both alike; the window opens and
#      closes while no anonymous THP exists and kthpscand is idle.
# The boot needs trace-cmd (qemu/boot.sh --root-files
# /var/cache/thp-scan/trace-cmd-ARCH) and swap (zram0).
T=/sys/kernel/mm/transparent_hugepage
S=$T/thp_scan
TR=/sys/kernel/tracing
CG=/sys/fs/cgroup
DAT=/tmp/trace_cmd.dat
pmd_kb=$(($(cat $T/hpage_pmd_size) / 1024))
STATS=$T/hugepages-${pmd_kb}kB/stats
echo "TAP version 13"
echo "1..2"

not_run() { # WHY
	echo "not ok 1 trace_cmd.fields_parse # $1"
	echo "not ok 2 trace_cmd.decisions_match_counters # $1"
	exit 1
}
command -v trace-cmd > /dev/null || not_run "no trace-cmd in this guest (qemu/boot.sh --root-files)"
[ -d $S ] || not_run "no $S (CONFIG_THP_SCAN=n?)"
if ! grep -q '^/dev/zram0 ' /proc/swaps; then
	echo 128M > /sys/block/zram0/disksize && mkswap /dev/zram0 > /dev/null &&
		swapon /dev/zram0 || not_run "no swap on zram0"
fi

vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# The figures compared, in one line: vmstat's four, the PMD size's two.
figures() {
	echo "$(vm thp_split_scan_scanned) $(vm thp_split_scan_pages_scanned)" \
	     "$(vm thp_split_scan_underused) $(vm thp_split_scan_swapout)" \
	     "$(cat $STATS/thp_split_scan_underused) $(cat $STATS/thp_split_scan_swapout)"
}
# Wait (up to 60 s) until no anonymous THP is left and the figures have
# not moved for 2 s: kthpscand has nothing to judge.
settle() {
	i=0 last=
	while [ $i -lt 60 ]; do
		now=$(figures)
		if [ "$now" = "$last" ] && [ "$(awk '$1 == "AnonHugePages:" { print $2 }' /proc/meminfo)" = 0 ]; then
			return 0
		fi
		last=$now
		sleep 2
		i=$((i + 2))
	done
	echo "# not settled after 60 s: $now"
	return 1
}

# kthpscand quick (the settings are restored at the end).
age=$(cat $S/min_age_millisecs) slp=$(cat $S/scan_sleep_millisecs) pol=$(sed 's/.*\[\(.*\)\].*/\1/' $T/enabled)
echo 500 > $S/min_age_millisecs
echo 100 > $S/scan_sleep_millisecs
echo always > $T/enabled

settle
trace-cmd record -e thp_scan -e huge_memory:thp_auto_state -o $DAT > /tmp/trace_cmd.rec 2>&1 &
rec=$!
i=0
while [ "$(cat $TR/events/thp_scan/thp_scan_decision/enable 2>/dev/null)" != 1 ] ||
      [ "$(cat $TR/events/huge_memory/thp_auto_state/enable 2>/dev/null)" != 1 ] ||
      [ "$(cat $TR/tracing_on)" != 1 ]; do
	[ $i -lt 30 ] || break
	sleep 1
	i=$((i + 1))
done
sleep 1
before=$(figures)
echo "# recording (trace-cmd pid $rec); figures before: $before"

# kthpscand: 8 PMD THPs with 4 KiB written in each, kept 10 s.
/tests/thp_sparse $((8 * pmd_kb / 1024)) 4 10 | sed 's/^/# /'
# Reclaim: 8 sparse THPs in a memcg, which memory.reclaim swaps out (to
# zram) before kthpscand may judge them (a minimum age of a minute).
echo 60000 > $S/min_age_millisecs
mkdir -p $CG/trace_cmd
echo +memory > $CG/cgroup.subtree_control
(echo 0 > $CG/trace_cmd/cgroup.procs && exec /tests/thp_sparse $((8 * pmd_kb / 1024)) 4 8) |
	sed 's/^/# /' &
wl=$!
i=0
until [ "$(awk '$1 == "anon_thp" { print $2 }' $CG/trace_cmd/memory.stat)" = $((8 * pmd_kb * 1024)) ] ||
      [ $i -ge 20 ]; do
	sleep 1
	i=$((i + 1))
done
echo "# the memcg: $(grep -E '^(anon|anon_thp) ' $CG/trace_cmd/memory.stat | tr '\n' ' ')"
echo $((8 * pmd_kb))K > $CG/trace_cmd/memory.reclaim ||
	echo "# memory.reclaim: not all of it (the one written page of each stays resident)"
echo "# after memory.reclaim: $(grep -E '^(anon|anon_thp) ' $CG/trace_cmd/memory.stat | tr '\n' ' ')"
wait $wl
rmdir $CG/trace_cmd
echo 500 > $S/min_age_millisecs
# auto: under pressure by its thresholds, then plentiful again.
echo auto > $T/enabled
a_pp=$(cat $T/auto/pressure_available_pct) a_pl=$(cat $T/auto/plentiful_available_pct)
echo 100 > $T/auto/plentiful_available_pct
echo 99 > $T/auto/pressure_available_pct
i=0
while [ "$(cat $T/auto/state)" != pressure ] && [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done
echo "$a_pp" > $T/auto/pressure_available_pct
echo "$a_pl" > $T/auto/plentiful_available_pct
i=0
while [ "$(cat $T/auto/state)" != plentiful ] && [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done
echo always > $T/enabled

settled=1
settle || settled=0
after=$(figures)
kill -INT $rec
wait $rec
echo "# figures after: $after; trace-cmd record:"
sed 's/^/#   /' /tmp/trace_cmd.rec
echo "$age" > $S/min_age_millisecs
echo "$slp" > $S/scan_sleep_millisecs
echo "$pol" > $T/enabled

trace-cmd report -R -i $DAT > /tmp/trace_cmd.raw 2> /tmp/trace_cmd.err
trace-cmd report -i $DAT > /tmp/trace_cmd.txt 2>> /tmp/trace_cmd.err
sed 's/^/# stderr: /' /tmp/trace_cmd.err

# 1. Fields: each event's format file against its records.
bad=0
for ev in thp_scan/thp_scan_decision thp_scan/thp_scan_split thp_scan/thp_scan_swapout \
	  huge_memory/thp_auto_state; do
	name=${ev#*/}
	fields=$(sed -n 's/^[[:space:]]*field:[^;]*[[:space:]]\([a-z_0-9]*\)\(\[[0-9]*\]\)\{0,1\};.*/\1/p' \
		 $TR/events/$ev/format | grep -v '^common_')
	n=$(grep -c " $name: " /tmp/trace_cmd.raw)
	echo "# $name: $n records; fields: $(echo $fields)"
	if [ "$n" = 0 ] || [ -z "$fields" ]; then
		echo "# $name: no record or no field"
		bad=1
		continue
	fi
	for f in $fields; do
		m=$(grep " $name: " /tmp/trace_cmd.raw | grep -c "[[:space:]]$f=")
		[ "$m" = "$n" ] || { echo "# $name: field $f in $m of $n raw records"; bad=1; }
	done
	# Formatted: as many records, decisions by name, not by number.
	m=$(grep -c " $name: " /tmp/trace_cmd.txt)
	[ "$m" = "$n" ] || { echo "# $name: $m formatted records, $n raw"; bad=1; }
	if grep " $name: " /tmp/trace_cmd.txt | grep -q 'decision=[-0-9]'; then
		echo "# $name: a decision printed as a number"
		bad=1
	fi
done
if grep -qi 'FAILED TO PARSE\|\[UNKNOWN' /tmp/trace_cmd.txt /tmp/trace_cmd.raw; then
	echo "# trace-cmd could not parse: $(grep -i -m 1 'FAILED TO PARSE\|\[UNKNOWN' /tmp/trace_cmd.txt /tmp/trace_cmd.raw)"
	bad=1
fi
grep -m 3 ' thp_scan_decision: \| thp_scan_swapout: \| thp_auto_state: ' /tmp/trace_cmd.txt | sed 's/^/#   /'
[ $bad = 0 ] && echo "ok 1 trace_cmd.fields_parse" || echo "not ok 1 trace_cmd.fields_parse"

# 2. The records against the counters.
set -- $before
[ $# = 6 ] || { echo "# figures before: \"$before\", not 6"; echo "not ok 2 trace_cmd.decisions_match_counters"; exit 1; }
b_sc=$1 b_ps=$2 b_so=$4 b_pun=$5 b_pso=$6
set -- $after
[ $# = 6 ] || { echo "# figures after: \"$after\", not 6"; echo "not ok 2 trace_cmd.decisions_match_counters"; exit 1; }
d_sc=$(($1 - b_sc)) d_ps=$(($2 - b_ps)) d_so=$(($4 - b_so)) d_pun=$(($5 - b_pun)) d_pso=$(($6 - b_pso))
# From the formatted records (KEY=VALUE after the event's name): the
# decisions kthpscand and the shrinker counted as judged (all but
# keep_locked) and the pages they read; the swap-out decisions' pages and
# their splits; the first split of each THP split as underused at the PMD
# order (a kept dense part's second split is from a smaller order).
page_kb=$(awk '$1 == "KernelPageSize:" { print $2; exit }' /proc/self/smaps)
pmd_order=0
while [ $((page_kb << pmd_order)) -lt $pmd_kb ]; do pmd_order=$((pmd_order + 1)); done
eval "$(awk -v pmd_order=$pmd_order '
	function f(k,   i) {
		for (i = 1; i <= NF; i++)
			if (index($i, k "=") == 1)
				return substr($i, length(k) + 2)
		return ""
	}
	/ thp_scan_decision: / && f("decision") != "keep_locked" { sc++; ps += f("scanned") }
	/ thp_scan_split: / && f("decision") == "split_underused" && f("ret") == "0" &&
		f("order") == pmd_order { pun++ }
	/ thp_scan_swapout: / {
		ps += f("scanned")
		d = f("decision")
		if ((d == "split_underused" || d == "split_partially_mapped" || d == "split_zero_runs") &&
		    f("ret") == "0") {
			so++
			if (f("order") == pmd_order)
				pso++
		}
	}
	END { printf "r_sc=%d r_ps=%d r_pun=%d r_so=%d r_pso=%d\n", sc, ps, pun, so, pso }
' /tmp/trace_cmd.txt)"
echo "# recorded: $r_sc decisions reading $r_ps pages, $r_pun PMD underused splits, $r_so swap-out splits ($r_pso PMD)"
echo "# counted:  scanned $d_sc, pages_scanned $d_ps, PMD underused $d_pun, swapout $d_so (PMD $d_pso)"
bad=0
[ $settled = 1 ] || { echo "# the window did not close settled: the figures may miss a decision"; bad=1; }
[ "$r_sc" = "$d_sc" ] || { echo "# decisions $r_sc, scanned $d_sc"; bad=1; }
[ "$r_ps" = "$d_ps" ] || { echo "# pages read $r_ps, pages_scanned $d_ps"; bad=1; }
[ "$r_pun" = "$d_pun" ] || { echo "# PMD underused splits $r_pun, counted $d_pun"; bad=1; }
[ "$r_so" = "$d_so" ] || { echo "# swap-out splits $r_so, counted $d_so"; bad=1; }
[ "$r_pso" = "$d_pso" ] || { echo "# PMD swap-out splits $r_pso, counted $d_pso"; bad=1; }
# The workloads made them: kthpscand split the 8 THPs, reclaim split some.
[ "$r_pun" -ge 8 ] || { echo "# fewer than 8 PMD THPs split as underused"; bad=1; }
[ "$r_so" -ge 1 ] || { echo "# no split at swap-out"; bad=1; }
[ $bad = 0 ] && echo "ok 2 trace_cmd.decisions_match_counters" ||
	echo "not ok 2 trace_cmd.decisions_match_counters"
