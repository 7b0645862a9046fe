#!/bin/bash
# Every test: the x86_64 and arm64 test kernels and the x86_64 debug kernel
# (KASAN, lockdep, DEBUG_VM, DEBUG_LIST), each booted in QEMU to run its
# KUnit suites and the in-guest tests, plus the workbench's own checks.
# Prints what it does as it goes and ends with "N passed, N failed".
#
# Two lanes run at once: the builder builds the kernels one after another
# (logs in build/logs/build-ARCH-CFG.log), then runs the static checks
# (they need the x86_64 test kernel's objects), and the tester builds the
# test programs, runs the workbench's checks, then boots each kernel as
# soon as it is built.  The boots are the longer lane: the static checks
# run beside the last boots rather than before the debug kernel's.  A boot mostly waits (kthpscand's minimum age, khugepaged, PSI),
# so the next kernel builds meanwhile.  Every result of either lane is
# counted (build/logs/tally); nothing is skipped to save time, except
# that the debug kernel's boot leaves out DEBUG_SKIP unless TEST_FULL=1
# (make test-full): thp_policy_fault (its policy cases run on both test
# kernels; 40 % of the debug boot) and thp_scan_collapse (it waits for
# full khugepaged passes over 128 MiB, which KASAN and lockdep make 30
# times slower under TCG: 443 s of the debug boot against 15 s on the
# test kernel, and killed at its 420 s limit when a kernel built beside
# it; the collapse code runs on the debug kernel all the same, in
# thp_scan_decisions's collapse_judged, through the collapse limit).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
# ARCH:CFG pairs to run, in the order they are built, e.g.
# TEST_CONFIGS="x86_64:test" for a quick run.  The debug kernel is built
# second: its build and its boot are the longest.
# make test-full adds the arm64 debug kernel, whose build alone takes
# about 33 minutes on 2 cores (KASAN's instrumentation, cross-compiled):
# with it the test command would not end within its 45 minutes.
if [ "${TEST_FULL:-0}" = 1 ]; then
	configs=${TEST_CONFIGS:-x86_64:test x86_64:debug arm64:test arm64:debug}
else
	configs=${TEST_CONFIGS:-x86_64:test x86_64:debug arm64:test}
fi
# Programs the debug kernels' boots leave out (TEST_FULL=1: none).
debug_skip=${DEBUG_SKIP-thp_policy_fault thp_scan_collapse}
[ "${TEST_FULL:-0}" = 1 ] && debug_skip=
# In the debug kernels' boots thp_scan_stress makes page and slab
# allocations fail at this probability (percent) in its workers,
# kthpscand, khugepaged and kswapd: fault injection, which only the debug
# kernels have (configs/debug.config).
debug_fail_pct=${DEBUG_FAIL_PCT:-1}
# The last kernel's boots are the run's tail: nothing builds beside them,
# and one guest that mostly waits leaves a core idle.  So its programs
# run in two guests at once: these in a second boot (ARCH-CFG-b), which
# then does the kernel's other boots, the rest in the first (ARCH-CFG).
# About half each: on an idle host the arm64 test kernel's boots took
# 330 s one after another, 199 s in two guests at once (arm64-test 154 s,
# arm64-test-b 174 s with thp_scan_collapse too, then about 25 s for the
# other boots).  TAIL_B= (empty): one boot runs every program.
tail_b=${TAIL_B-thp_policy_fault thp_scan_facts}
last_config=${configs##* }
mkdir -p "$build/logs"
state=$build/logs/test-state
rm -rf "$state"
mkdir -p "$state"
tally=$state/tally
: > "$tally"
: > "$state/fails"

# Boot parameters and what thp_policy_boot must find (see its source).
# thp_scan= too: on, by default (the log line with the collapse limit of
# the defaults: 12 % of 512 PTEs), a bad value (ignored: on) and off.
boot_params=(
	"transparent_hugepage=defer thp_anon=64K:auto thp_scan=on thpscan.expect_global=defer thpscan.expect_64kB=auto thpscan.expect_2048kB=never thpscan.expect_thp_scan=1 thpscan.expect_log=thp_scan:+on:+kthpscand+splits"
	"transparent_hugepage=auto thp_anon=2M:defer;32K:defer thpscan.expect_global=auto thpscan.expect_2048kB=defer thpscan.expect_32kB=defer thpscan.expect_thp_scan=1 thpscan.expect_log=khugepaged+collapses+a+PMD+range+only+with+at+most+61+of+its+512+PTEs+new+(collapse_max_new_pct;+max_ptes_none+511)"
	"transparent_hugepage=sometimes thp_anon=64K:bogus thp_scan=maybe thpscan.expect_global=always thpscan.expect_64kB=never thpscan.expect_thp_scan=1 thpscan.expect_log=transparent_hugepage=sometimes+cannot+parse thpscan.expect_log=thp_anon=64K:bogus:+error+parsing thpscan.expect_log=invalid+policy+bogus+in+thp_anon+boot+parameter thpscan.expect_log=thp_scan=maybe:+cannot+parse,+ignored"
	# One bad entry after good ones: thp_anon= is ignored as a whole, the
	# sizes the good entries set are back at their defaults.
	"transparent_hugepage=always thp_anon=16K,32K:always;2M:defer;64K:bogus thp_scan=off thpscan.expect_global=always thpscan.expect_16kB=never thpscan.expect_32kB=never thpscan.expect_64kB=never thpscan.expect_2048kB=inherit thpscan.expect_thp_scan=0 thpscan.expect_log=invalid+policy+bogus+in+thp_anon+boot+parameter thpscan.expect_log=thp_anon=16K,32K:always;2M:defer;64K:bogus:+error+parsing+string,+ignoring+setting thpscan.expect_log=thp_scan:+off+(thp_scan=off):+khugepaged"
)

# Boots that run one *_boot program with boot parameters of its own:
# "PROGRAM PARAMETERS".
boot_programs=(
	# No memory controller: THPs go to the per-node thp_scan queues.
	"thp_scan_node_boot cgroup_disable=memory"
)

t0=$(date +%s)
step() { echo "== [$(date +%T), +$(($(date +%s) - t0)) s] $*"; }
# Every count goes to the tally file, so that both lanes count: one line
# "PASSED FAILED SKIPPED" each (an append this short is atomic).
count() { # count DIR: add the "passed failed skipped" of a boot's logs
	cat "$1/counts" >> "$tally"
	grep -E '^[^ ]+: FAIL ' "$1/summary.txt" >> "$state/fails" 2>/dev/null
}
check() { # check NAME OK?
	if [ "$2" = 0 ]; then
		echo "1 0 0" >> "$tally"; echo "workbench: ok: $1"
	else
		echo "0 1 0" >> "$tally"; echo "workbench: FAIL: $1" | tee -a "$state/fails"
	fi
}
finish() {
	local p=0 f=0 s=0 a b c
	while read -r a b c; do
		p=$((p + a)) f=$((f + b)) s=$((s + c))
	done < "$tally"
	step "done"
	# What failed, by name, again at the end (a CI log may keep only
	# its tail): the workbench's own FAIL lines and each boot's.
	if [ "$f" != 0 ]; then
		echo "failed:"
		sed 's/^/  /' "$state/fails"
	fi
	echo "$p passed, $f failed, $s skipped"
	[ "$f" = 0 ]
	exit
}
# boot NAME ARGS...: one qemu/boot.sh run, counted.  Its counts are
# results.py's; a boot that exits non-zero without a counted failure (or
# writes no counts) is one more failure.
boot() {
	local name=$1 rc p f s
	shift
	"$top/qemu/boot.sh" --name "$name" "$@"
	rc=$?
	if [ -f "$build/logs/$name/counts" ]; then
		count "$build/logs/$name"
		read -r p f s < "$build/logs/$name/counts"
		[ "$rc" = 0 ] || [ "$f" != 0 ] || check "boot $name: qemu/boot.sh exit status $rc" 1
	else
		check "boot $name: no counts (qemu/boot.sh exit status $rc)" 1
	fi
}
# Time limits in seconds of the ARCH-CFG boot that runs every program,
# by the host's clock (the guest reads it from its RTC; see qemu/init):
# BOOT_LIMIT (QEMU is killed) and PROG_LIMIT (the guest's init kills one
# program and names it).  Measured on 2 cores under TCG, the programs run
# in about 110 s on x86_64 and on arm64 alike when the host is idle (they
# mostly wait: kthpscand's minimum age, khugepaged, PSI), the longest,
# thp_scan_split, in about 70 s; with other kernels building, the x86_64
# boot took 310 s (its guest clock, jiffies, falls behind: its sleeps last
# longer).  A program may take 6 times its idle time, and the boot's limit
# leaves room for one program hung at its limit plus all the others at
# their slowest, so that they still run and report.
limits() { # ARCH CFG
	case "$1-$2" in
	*-test) BOOT_LIMIT=900 PROG_LIMIT=450 ;;
	# make test-full's arm64 debug boot, every program: about 30
	# minutes beside two other guests (README.md, "Time").
	arm64-debug) BOOT_LIMIT=3600 PROG_LIMIT=900 ;;
	*) BOOT_LIMIT=1800 PROG_LIMIT=900 ;;
	esac
}

# --- the builder lane --------------------------------------------------
# Builds each kernel in turn; $state/built-ARCH-CFG holds its exit status.
builder() {
	local c arch cfg rc
	for c in $configs; do
		arch=${c%%:*} cfg=${c#*:}
		step "building the $arch-$cfg kernel (log: build/logs/build-$arch-$cfg.log)"
		"$W/build-kernel.sh" "$arch" "$cfg" > "$build/logs/build-$arch-$cfg.log" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			step "built: $(tail -n 1 "$build/logs/build-$arch-$cfg.log")"
		else
			tail -n 40 "$build/logs/build-$arch-$cfg.log"
		fi
		[ $rc = 0 ] || check "build the $arch-$cfg kernel" 1
		echo $rc > "$state/built-$arch-$cfg"
	done
	if [ "$(cat "$state/built-x86_64-test" 2>/dev/null)" = 0 ]; then
		step "static checks (checkpatch, kernel-doc, sparse, coccicheck)"
		static_checks
		echo 0 > "$state/static-done"
	fi
}
# wait_kernel ARCH CFG: until the builder is done with it; fails if it
# did not build.
wait_kernel() {
	while [ ! -f "$state/built-$1-$2" ]; do
		kill -0 "$builder_pid" 2>/dev/null || break
		sleep 5
	done
	[ "$(cat "$state/built-$1-$2" 2>/dev/null)" = 0 ]
}

# --- the tester lane ----------------------------------------------------
# The boots of one kernel after the one that runs every program.
test_boots() { # ARCH CFG
	local arch=$1 cfg=$2 n params entry prog
	# The upstream mm selftests that exercise THP, unmodified, the quick
	# set (workbench/upstream/tests) under defer, on x86_64 (built while
	# the first kernel built); make selftests-matrix runs them all on both
	# architectures under every policy.  About 4 minutes.  Three CPUs:
	# migration needs them.  2 GiB: in 1 GiB khugepaged's
	# collapse_compound_extreme now and then fails to allocate a PMD THP
	# after cow ran (see README.md, "Upstream mm selftests").
	if [ "$arch" = x86_64 ] && [ "$(cat "$state/upstream-$arch" 2>/dev/null)" = 0 ]; then
		step "booting $arch-$cfg with transparent_hugepage=defer for the upstream mm selftests (quick)"
		boot "$arch-upstream-defer-quick" --arch "$arch" --cfg "$cfg" --tests upstream_mm_quick \
			--file "$build/tests/$arch/upstream:/upstream" \
			--append transparent_hugepage=defer --mem 2048 --smp 3 --timeout 900 --quiet
	fi
	# The hazards again on an arm64 CPU with MTE (QEMU -M virt,mte=on),
	# where hazards.mte_tagged_zero_granules runs.  About 1 minute.
	if [ "$arch" = arm64 ]; then
		step "booting $arch-$cfg with MTE for thp_scan_hazards"
		boot "$arch-mte" --arch "$arch" --cfg "$cfg" --mte --tests thp_scan_hazards \
			--timeout 600 --test-timeout 450 --quiet
	fi
	# Debian's trace-cmd records the tracepoints and its records add up
	# to the counters (workbench/guest/trace_cmd.sh).  About 1 minute.
	if [ "$cfg" = test ]; then
		step "booting $arch-$cfg with Debian's trace-cmd for trace_cmd"
		boot "$arch-trace-cmd" --arch "$arch" --cfg "$cfg" --tests trace_cmd \
			--root-files "${BB_ARM64_DIR:-/var/cache/thp-scan}/trace-cmd-$arch" \
			--timeout 600 --quiet
	fi
	# The THP policy boot parameters, good and bad, one boot each.
	n=0
	for params in "${boot_params[@]}"; do
		n=$((n + 1))
		step "booting $arch-$cfg with: ${params%% thpscan.*}"
		boot "$arch-boot$n" --arch "$arch" --cfg "$cfg" \
			--tests thp_policy_boot --append "$params" --timeout 300 --quiet
	done
	for entry in "${boot_programs[@]}"; do
		prog=${entry%% *} params=${entry#* }
		step "booting $arch-$cfg with $params for $prog"
		"$top/qemu/boot.sh" --arch "$arch" --cfg "$cfg" --name "$arch-$prog" \
			--tests "$prog" --append "$params" --timeout 300 --quiet
		if [ -f "$build/logs/$arch-$prog/counts" ]; then
			count "$build/logs/$arch-$prog"
		else
			check "boot $arch-$prog" 1
		fi
	done
}

workbench_checks() {
	# The expected list (qemu/expected-tests) against the sources.
	python3 "$W/check-expected.py"
	check "qemu/expected-tests lists what the sources define" $?
	# ... and that check itself, on fixture sources with a case added and one
	# removed.
	sc=$W/selfcheck
	out=$(python3 "$W/check-expected.py" --root "$sc/sources" --list "$sc/sources/expected-tests" \
		--allow "$sc/sources/skips.allow" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  selfcheck: /'
	[ $rc = 1 ] &&
		grep -qF 'kunit fixture.fixture_case_new is defined in the sources but not in' <<< "$out" &&
		grep -qF 'add the line "thp_scan_fixture fixture.variant_b.added" there' <<< "$out" &&
		grep -qF 'thp_scan_fixture global.removed is in' <<< "$out" &&
		grep -q ': 3 differences$' <<< "$out"
	check "check-expected.py finds a test missing from the list and one gone from the sources" $?

	# The result parser on fixtures whose counts are known (each folder's
	# "expect": its exit status, its counts and the FAIL lines that say why;
	# see workbench/selfcheck/README), then each check that a fixture exists
	# for taken out of a copy of results.py: the fixture must then fail.
	selfcheck_lines() { # LABEL COMMAND...: its "WORD: ok: ..." / "WORD: FAIL: ..." lines counted
		local label=$1 out rc line
		shift
		out=$("$@" 2>&1)
		rc=$?
		echo "$out" | grep -v ': ok: ' | sed 's/^/  /'
		while IFS= read -r line; do
			case "$line" in
			*": ok: "*) check "${line#*: ok: }" 0 ;;
			*": FAIL: "*) check "${line#*: FAIL: }" 1 ;;
			esac
		done < <(echo "$out" | grep -E '^[a-z]+: (ok|FAIL): ')
		check "$label exit status ($rc)" $rc
	}
	selfcheck_lines workbench/selfcheck/run.sh "$sc/run.sh"
	selfcheck_lines workbench/selfcheck/mutants.py python3 "$sc/mutants.py"
}

# Kernel reports, failed mounts and time limits on real boots of the
# x86_64 test kernel.
selfcheck_boots() {
	local out rc
	sboot() { # NAME ARGS...: boot, keep the output in build/logs/NAME.out
		local name=$1
		shift
		"$top/qemu/boot.sh" --arch x86_64 --cfg test --name "$name" --quiet "$@" \
			> "$build/logs/$name.out" 2>&1
		rc=$?
		sed 's/^/  /' "$build/logs/$name.out"
	}
	# Kernel reports fail a run whose tests all pass: LKDTM provokes a
	# WARNING, a hung task (a task in D state, reported after
	# hung_task_timeout_secs) and a soft lockup (a CPU spinning with
	# preemption off, reported after 2 * watchdog_thresh s; then a panic
	# ends the guest).
	sboot selfcheck-reports --tests none --timeout 300 --cmd '
		lkdtm=/sys/kernel/debug/provoke-crash/DIRECT
		echo WARNING > $lkdtm
		echo 2 > /proc/sys/kernel/hung_task_timeout_secs
		echo HUNG_TASK > $lkdtm &
		i=0
		while [ $i -lt 120 ] && ! dmesg | grep -q "blocked for more than"; do
			sleep 1; i=$((i + 1))
		done
		echo 1 > /proc/sys/kernel/softlockup_panic
		echo 1 > /proc/sys/kernel/watchdog_thresh
		echo SOFTLOCKUP > $lkdtm'
	out=$build/logs/selfcheck-reports.out
	[ $rc = 1 ] && grep -q 'FAIL console: kernel reports' "$out" &&
		grep -q '^    \[WARNING\] .*WARNING: CPU' "$out" &&
		grep -q '^    \[hung task\] .*INFO: task .* blocked for more than [0-9]* seconds' "$out" &&
		grep -q '^    \[soft lockup\] .*BUG: soft lockup - CPU#' "$out"
	check "a WARNING, a hung task and a soft lockup in the console fail the run" $?

	# A pseudo file system that does not mount stops the run before the tests.
	sboot selfcheck-mount --tests thp_scan_smoke --timeout 300 --append thpscan.fail_mount=tracefs
	out=$build/logs/selfcheck-mount.out
	[ $rc = 1 ] && grep -q 'FAIL guest init: mount failed: tracefs /sys/kernel/tracing' "$out" &&
		grep -q 'FAIL thp_scan_smoke: did not run: the guest.s init stopped' "$out" &&
		! grep -q THPSCAN-TEST-BEGIN "$build/logs/selfcheck-mount/results.log"
	check "a failed mount in the guest stops the run and fails it" $?

	# Time limits: a program killed at its limit (15 s here) is named, and
	# so are the processes it forked (the harness runs each test in a
	# process group of its own: tap_sleeper, a helper that never ends, does
	# the same, so that the check does not depend on how fast a real test
	# is); the next program still runs; none starts when less than 20 s
	# are left before the boot's deadline (75 s minus the 30 s margin):
	# thp_scan_knobs, last, is named as not started; and the guest powers
	# off before QEMU's timeout.
	sboot selfcheck-timeout --tests "tap_sleeper thp_policy_fault thp_scan_knobs" \
		--test-timeout 15 --timeout 75
	out=$build/logs/selfcheck-timeout.out
	[ $rc = 1 ] && grep -q 'FAIL tap_sleeper: killed by the guest.s init after [0-9]* s (limit 15 s); also killed: [0-9]*:tap_sleeper' "$out" &&
		grep -q 'FAIL thp_policy_fault: \(killed by the guest.s init after\|not started:\)' "$out" &&
		grep -q "FAIL thp_scan_knobs: not started: [0-9]* s left before the boot's deadline" "$out" &&
		! grep -q 'FAIL guest finished' "$out" && ! grep -q 'QEMU killed' "$out"
	check "programs killed at their limit or not started before the deadline fail by name" $?
}

static_checks() {
	"$W/check.sh" > "$build/logs/check.out" 2>&1
	crc=$?
	cat "$build/logs/check.out"
	while read -r line; do
		case "$line" in
		"check: "*": clean") check "${line%: clean}" 0 ;;
		"check: "*) check "${line%: findings above}" 1 ;;
		esac
	done < <(grep '^check: ' "$build/logs/check.out")
	# Whatever its lines said, check.sh failing fails the run.
	check "workbench/check.sh exit status ($crc)" $crc
}

step "assembling the kernel tree"
if ! "$W/tree.sh"; then
	check "assemble the tree" 1
	finish
fi

builder &
builder_pid=$!

# While the first kernel builds: the test programs of every architecture
# that will boot, and the upstream mm selftests (they need only the tree).
for a in $(for c in $configs; do echo "${c%%:*}"; done | awk '!seen[$0]++'); do
	step "building the $a test programs"
	"$W/build-tests.sh" "$a" > "$build/logs/build-tests-$a.log" 2>&1
	rc=$?
	cat "$build/logs/build-tests-$a.log"
	echo $rc > "$state/tests-$a"
	[ $rc = 0 ] || check "build the $a test programs" 1
done
if [[ " $configs " = *" x86_64:test "* ]]; then
	step "building the x86_64 upstream mm selftests"
	"$W/build-upstream.sh" x86_64 2> "$build/logs/build-upstream-x86_64.log"
	rc=$?
	[ $rc = 0 ] || tail -n 40 "$build/logs/build-upstream-x86_64.log"
	echo $rc > "$state/upstream-x86_64"
	[ $rc = 0 ] || check "build the x86_64 upstream mm selftests" 1
fi
step "workbench checks"
workbench_checks

for c in $configs; do
	arch=${c%%:*} cfg=${c#*:}
	step "waiting for the $arch-$cfg kernel"
	wait_kernel "$arch" "$cfg" || continue
	[ "$(cat "$state/tests-$arch")" = 0 ] || continue
	limits "$arch" "$cfg"
	fail_append=()
	[ "$cfg" = debug ] && fail_append=(--append "thpscan.stress_fail=$debug_fail_pct")
	tests=all tests_b=
	if [ "$cfg" = debug ] && [ -n "$debug_skip" ]; then
		tests=$(for t in $(cat "$build/tests/$arch/tests.list"); do
			[[ " $debug_skip " = *" $t "* ]] || echo "$t"; done | tr '\n' ' ')
		step "booting $arch-$cfg without $debug_skip (make test-full runs it; console: build/logs/$arch-$cfg/console.log)"
	elif [ "$c" = "$last_config" ] && [ "$cfg" = test ] && [ -n "$tail_b" ]; then
		# The tail: two guests at once (see tail_b above).
		tests= tests_b=
		for t in $(cat "$build/tests/$arch/tests.list"); do
			if [[ " $tail_b " = *" $t "* ]]; then
				tests_b="$tests_b $t"
			else
				tests="$tests $t"
			fi
		done
		tests=${tests# } tests_b=${tests_b# }
		# Nothing left for the first guest: one boot after all.
		[ -n "$tests" ] || tests=$tests_b tests_b=
		step "booting $arch-$cfg with $tests and, at once, $arch-$cfg-b with $tests_b then the other boots (consoles: build/logs/$arch-$cfg{,-b}/console.log)"
	else
		step "booting $arch-$cfg (console: build/logs/$arch-$cfg/console.log)"
	fi
	if [ -n "$tests_b" ]; then
		(
			boot "$arch-$cfg-b" --arch "$arch" --cfg "$cfg" --tests "$tests_b" \
				--timeout "$BOOT_LIMIT" --test-timeout "$PROG_LIMIT"
			test_boots "$arch" "$cfg"
		) &
		lane_b=$!
	fi
	if [ "$cfg" != test ] && [ "$c" != "$last_config" ]; then
		# The debug kernel's boot, the longest (about 900 s), runs
		# beside the next kernel's boots rather than before them: the
		# guests mostly wait (kthpscand's minimum age, khugepaged).
		boot "$arch-$cfg" --arch "$arch" --cfg "$cfg" --tests "$tests" \
			--timeout "$BOOT_LIMIT" --test-timeout "$PROG_LIMIT" \
			${fail_append[@]+"${fail_append[@]}"} &
		lanes="${lanes:-} $!"
		continue
	fi
	boot "$arch-$cfg" --arch "$arch" --cfg "$cfg" --tests "$tests" --timeout "$BOOT_LIMIT" \
		--test-timeout "$PROG_LIMIT" ${fail_append[@]+"${fail_append[@]}"}
	[ "$cfg" = test ] || continue
	if [ -n "$tests_b" ]; then
		wait "$lane_b"
	else
		test_boots "$arch" "$cfg"
	fi
	if [ "$arch" = x86_64 ]; then
		step "workbench checks on real boots of the x86_64 test kernel"
		selfcheck_boots
		selfcheck_done=1
	fi
done
for l in ${lanes:-}; do
	wait "$l"
done
wait "$builder_pid"
# Without a new x86_64 test kernel (not in TEST_CONFIGS, or it did not
# build): the real-boot self-checks on the one there is, if any, and the
# static checks all the same (sparse fails without a build).
if [ -z "${selfcheck_done:-}" ] && [ -f "$build/obj/x86_64-test/arch/x86/boot/bzImage" ] &&
	[ -f "$build/tests/x86_64/tests.list" ]; then
	step "workbench checks on real boots of the x86_64 test kernel"
	selfcheck_boots
fi
if [ ! -f "$state/static-done" ]; then
	step "static checks (checkpatch, kernel-doc, sparse, coccicheck)"
	static_checks
fi
cd "$top"
finish
