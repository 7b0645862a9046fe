#!/bin/sh
# upstream_mm, upstream_mm_quick: run the upstream mm selftests of
# /upstream/tests (workbench/upstream/tests; "full" or "quick" by this
# program's name), unmodified, under the THP policy the guest booted with
# (transparent_hugepage=POLICY), with swap on zram, each with its time
# limit.  Prints TAP: one result per upstream program, "upstream.NAME",
# with the program's own counts:
#   ok N upstream.NAME # P pass, 0 skip            it exited 0, nothing failed or
#                                                   skipped
#   ok N upstream.NAME # SKIP P pass, S skip: WHAT  it exited 0, nothing failed,
#                                                   S > 0 cases skipped: WHAT names
#                                                   each ("[K x ]CASE: MESSAGE; ...")
#   ok N upstream.NAME # SKIP MESSAGE               it skipped as a whole (exit 4,
#                                                   or every case skipped)
#   not ok N upstream.NAME # ... no case counted    it exited 0 but printed no
#                                                   result that run.sh can count
# A skip, whole or of some cases, fails the run unless qemu/skips.allow
# has an entry for that boot, test and message (results.py): a skipped
# case is not a pass.
#   ok N upstream.NAME # XFAIL WHY                  its failures are thp_scan's
#                                                   collapse limit (THP_SCAN "limit")
#   not ok N upstream.NAME # WHY: P pass, S skip, F fail
# and the program's output before it, as "# " lines.  Its cases are
# counted from its TAP ("ok", "not ok", "# SKIP") or, for khugepaged,
# which prints none, from its "OK", "Fail" ("Fail: WHY") and "Skip"
# verdicts; uffd-unit-tests from its closing "pass=P, skip=S, fail=F".
dir=/upstream
set=full
case "$0" in *_quick) set=quick ;; esac

policy=
for a in $(cat /proc/cmdline); do
	case "$a" in transparent_hugepage=*) policy=${a#transparent_hugepage=} ;; esac
done
enabled=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
now=$(echo "$enabled" | sed -n 's/.*\[\(.*\)\].*/\1/p')
echo "# upstream mm selftests ($set): THP policy $now ($enabled); booted with transparent_hugepage=$policy"
bad=
[ -n "$policy" ] && [ "$now" = "$policy" ] || bad="THP policy is \"$now\", not the boot's \"$policy\""

# Swap on zram (khugepaged's swap cases need swap).
if ! grep -q '^/dev/zram0 ' /proc/swaps; then
	echo 256M > /sys/block/zram0/disksize && mkswap /dev/zram0 > /dev/null &&
		swapon /dev/zram0 || bad="${bad:+$bad; }no swap on zram0"
fi
echo "# swap: $(grep '^/dev/' /proc/swaps | tr -s ' ' | cut -d' ' -f1,3)"

grep -v '^#' "$dir/tests" | grep . | while read -r sets name limit cmd; do
	case ",$sets," in *",$set,"*) echo "$name" ;; esac
done > /tmp/upstream-list
echo "1..$(wc -l < /tmp/upstream-list)"

# The ranges thp_scan's collapse limit kept from khugepaged: the PMD
# size's per-size stat (khugepaged makes PMD-sized THPs only); 0 without it.
thp=/sys/kernel/mm/transparent_hugepage
collapse_skipped() {
	cat "$thp/hugepages-$(($(cat $thp/hpage_pmd_size) / 1024))kB/stats/thp_split_scan_collapse_skipped" 2>/dev/null ||
		echo 0
}

n=0
while read -r sets name limit thp_scan cmd; do
	case "$sets" in '#'*|'') continue ;; esac
	case ",$sets," in *",$set,"*) ;; *) continue ;; esac
	n=$((n + 1))
	log=/tmp/upstream-$name.log
	if [ -n "$bad" ]; then
		echo "not ok $n upstream.$name # not run: $bad"
		continue
	fi
	echo "# $name: $cmd (limit $limit s, thp_scan $thp_scan)"
	ts=/sys/kernel/mm/transparent_hugepage/thp_scan/enabled
	read -r ts_was < $ts
	[ "$thp_scan" = off ] && echo 0 > $ts
	before=$(collapse_skipped)
	read -r t0 _ < /proc/uptime
	# A session of its own, so that whatever it forked goes with it.
	(cd "$dir" && exec setsid sh -c "exec $cmd") > "$log" 2>&1 < /dev/null &
	pid=$!
	i=0
	while kill -0 "$pid" 2>/dev/null && [ "$i" -lt "$limit" ]; do
		sleep 1
		i=$((i + 1))
	done
	killed=
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL -- "-$pid" 2>/dev/null
		killed=1
	fi
	wait "$pid"
	rc=$?
	kill -KILL -- "-$pid" 2>/dev/null
	read -r t1 _ < /proc/uptime
	echo "$ts_was" > $ts
	after=$(collapse_skipped)
	echo "# $name: $before -> $after (ranges thp_scan's collapse limit kept from khugepaged)"
	secs=$(( ${t1%.*} - ${t0%.*} ))
	# Colours out; khugepaged's progress lines (ending in \r) one each.
	tr '\r' '\n' < "$log" | tr -d '\033' | sed 's/\[[0-9;]*m//g' > "$log.txt"
	grep -v ' [0-9]*/[0-9]*\.\.\.$' "$log.txt" | sed 's/^/# | /'
	if grep -q '^Userfaults unit tests: pass=' "$log.txt"; then
		# uffd-unit-tests: "Testing X on Y... done|skipped|failed" and a total.
		eval "$(sed -n 's/^Userfaults unit tests: pass=\([0-9]*\), skip=\([0-9]*\), fail=\([0-9]*\).*/pass=\1 skip=\2 fail=\3/p' "$log.txt" | tail -n 1)"
		msg=$(sed -n 's/^Testing .*skipped \[reason: \(.*\)\]$/\1/p' "$log.txt" | head -n 1)
	elif grep -q '^\(not \)\{0,1\}ok [0-9]' "$log.txt"; then
		skip=$(grep -c '^ok [0-9]* .*# \(SKIP\|XFAIL\)' "$log.txt")
		pass=$(($(grep -c '^ok [0-9]' "$log.txt") - skip))
		fail=$(grep -c '^not ok [0-9]' "$log.txt")
		msg=$(sed -n 's/^ok [0-9]* .*# SKIP *//p' "$log.txt" | head -n 1)
	else
		pass=$(grep -c ' OK$' "$log.txt")
		fail=$(grep -c ' Fail\(: .*\)\{0,1\}$' "$log.txt")
		skip=$(grep -c ' Skip$' "$log.txt")
		msg=
	fi
	counts="$pass pass, $skip skip, $fail fail"
	# What skipped: each case's title ("# [RUN] ..." before it, else its
	# TAP description; khugepaged: its line; uffd-unit-tests: "TEST on
	# MEM") and message, the same ones counted once ("K x ").
	skipped=$(awk '
		/^# \[RUN\] / { title = substr($0, 9); next }
		/^ok [0-9]+ .*# (SKIP|XFAIL)/ {
			d = $0; sub(/^ok [0-9]+ */, "", d)
			m = d; sub(/^[^#]*# (SKIP|XFAIL) */, "", m); sub(/ *#.*$/, "", d)
			t = (title != "" ? title : d)
			print (t != "" ? t ": " : "") m; title = ""; next }
		/^ok [0-9]+ / || /^not ok [0-9]+ / { title = ""; next }
		/ Skip$/ { d = $0; sub(/ Skip$/, "", d); sub(/[ .]*$/, "", d); print d ": Skip"; next }
		/^Testing .*skipped \[reason: / {
			d = $0; sub(/^Testing /, "", d); m = d
			sub(/\.\.\. *skipped.*$/, "", d); sub(/^.*\[reason: /, "", m); sub(/\]$/, "", m)
			print d ": " m }
	' "$log.txt" | sort | uniq -c | sed 's/^ *1 //; s/^ *\([0-9]*\) /\1 x /' | paste -sd ';' | sed 's/;/; /g')
	# THP_SCAN "limit": khugepaged's failures in its khugepaged context
	# are what thp_scan's collapse limit does by design when it kept
	# ranges from khugepaged (thp_split_scan_collapse_skipped grew) and it ran
	# to its end (its exit status is its count of failures); a failure
	# in the madvise context (MADV_COLLAPSE, not limited) is not.
	xfail=
	if [ "$thp_scan" = limit ] && [ "$fail" -gt 0 ] && [ "$rc" = "$fail" ] && [ -z "$killed" ] &&
	   [ "$after" -gt "$before" ]; then
		other=$(awk '/^Run test: /{ctx=$NF} / Fail(: .*)?$/{if (ctx !~ /^\(khugepaged:/) n++} END{print n+0}' "$log.txt")
		[ "$other" = 0 ] && xfail="$fail cases of the khugepaged context failed as thp_scan's collapse limit kept $((after - before)) ranges from khugepaged"
	fi
	echo "# $name: exit status $rc after $secs s (guest clock): $counts"
	if [ -n "$xfail" ]; then
		echo "ok $n upstream.$name # XFAIL $xfail"
	elif [ -n "$killed" ]; then
		echo "not ok $n upstream.$name # killed after $limit s: $counts"
	elif [ "$rc" = 4 ] && [ "$fail" = 0 ] && [ "$pass" = 0 ]; then
		echo "ok $n upstream.$name # SKIP $(grep . "$log.txt" | tail -n 1 | sed 's/^.*# SKIP *//')"
	elif [ "$rc" = 0 ] && [ "$fail" = 0 ] && [ "$pass" = 0 ] && [ "$skip" -gt 0 ]; then
		echo "ok $n upstream.$name # SKIP all $skip skipped: $msg"
	elif [ "$rc" = 0 ] && [ "$fail" = 0 ] && [ "$pass" = 0 ] && [ "$skip" = 0 ]; then
		echo "not ok $n upstream.$name # exit status 0 but no case counted: $counts"
	elif [ "$rc" = 0 ] && [ "$fail" = 0 ] && [ "$skip" -gt 0 ]; then
		echo "ok $n upstream.$name # SKIP $pass pass, $skip skip: ${skipped:-no skipped case named}"
	elif [ "$rc" = 0 ] && [ "$fail" = 0 ]; then
		echo "ok $n upstream.$name # $counts"
	else
		echo "not ok $n upstream.$name # exit status $rc: $counts"
	fi
done < "$dir/tests"
exit 0
