#!/bin/bash
# Boot a workbench kernel in QEMU (TCG), run the in-guest tests, check the
# console and count the results.  See README.md ("Boot by hand").
#
#   qemu/boot.sh [--arch x86_64|arm64] [--cfg test|debug] [--kernel IMAGE]
#                [--tests all|none|"name ..."] [--file PATH[:GUEST_PATH]]...
#                [--root-files DIR]...
#                [--cmd "SHELL COMMAND"] [--append "KERNEL ARGS"]
#                [--timeout SECONDS] [--test-timeout SECONDS] [--mem MiB]
#                [--smp N] [--numa N] [--icount SPEC] [--mte] [--name NAME]
#                [--quiet] [--rounds N] [--neighbour "SHELL COMMAND"]
#                [--qemu-arg ARG]...
#
# Writes build/logs/NAME/{console.log,results.log,summary.txt} (NAME is
# ARCH-CFG unless given) and exits 0 only if the guest finished, every
# expected KUnit case and in-guest test (qemu/expected-tests) reported and
# passed or skipped as qemu/skips.allow allows, the extra command exited 0,
# and the console holds no oops, BUG, WARNING, KASAN or lockdep report,
# lockup, hung task or panic.
#
# Time limits: QEMU is killed after --timeout seconds.  Inside, the
# guest's init kills a program (or the extra command) after
# --test-timeout seconds (default: the whole budget), starts none after
# the boot's deadline (--timeout minus a margin for the shutdown), and
# reports each program it killed or did not start by name.
#
# --icount SPEC runs QEMU with -icount SPEC (e.g. shift=0,sleep=off with
# --smp 1, as the benchmark does): guest time then counts instructions and
# does not depend on the host's load.  Without it, nothing changes.
#
# --rounds N runs the programs N times over in the one boot (make
# flake-hunt); qemu/flakes.py then prints, for each program, its runs,
# failures and first failure line instead of results.py's counts.
#
# --neighbour CMD runs CMD (a program and its arguments: init exec's it)
# in the background from before the first program to after the last
# (make flake-hunt FLAKE_NEIGHBOUR=1 runs /tests/thp_neighbour, another
# task's large folios): a test that reads only what belongs to it passes
# all the same.
#
# --root-files DIR puts every file below DIR at the same path in the
# guest (DIR/usr/bin/x at /usr/bin/x): a dynamically linked program with
# its libraries and loader, as workbench/install-deps.sh leaves Debian's
# trace-cmd in /var/cache/thp-scan/trace-cmd-ARCH.
#
# --qemu-arg ARG passes ARG to QEMU as it is (bench/insn_profile.py: a
# monitor socket, -singlestep, the log file).
#
# --mte (arm64) gives the CPU the Memory Tagging Extension (-M virt,mte=on;
# the kernel needs CONFIG_ARM64_MTE): PROT_MTE works in the guest.
#
# The guest has --numa NUMA nodes (default 2), the memory split evenly
# between them: numa=fake=N on x86_64 (no ACPI in the test kernels),
# QEMU's device-tree NUMA on arm64; --numa 1 gives a flat machine.  The
# command line says how many with thpscan.numa_nodes=N, and how many CPUs
# with thpscan.cpus=N, for the tests (not thpscan.expect_*:
# thp_policy_boot reads every one of those).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}

arch=x86_64 cfg=test kernel= tests=all cmd= append= timeout=900 test_timeout= mem=1024 smp=2
numa=2
name= quiet=0 files=() icount=() mte=0 rounds= qargs=() neighbour=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) arch=$2; shift ;;
	--cfg) cfg=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--tests) tests=$2; shift ;;
	--file) files+=("$2"); shift ;;
	--root-files)
		[ -d "$2" ] || { echo "boot.sh: --root-files: no folder $2" >&2; exit 2; }
		while IFS= read -r f; do
			files+=("$2/$f:/$f")
		done < <(cd "$2" && find . -type f | sed 's|^\./||' | sort)
		shift ;;
	--cmd) cmd=$2; shift ;;
	--append) append=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--test-timeout) test_timeout=$2; shift ;;
	--mem) mem=$2; shift ;;
	--smp) smp=$2; shift ;;
	--icount) icount=(-icount "$2"); shift ;;
	--numa) numa=$2; shift ;;
	--mte) mte=1 ;;
	--qemu-arg) qargs+=("$2"); shift ;;
	--rounds) rounds=$2; shift ;;
	--neighbour) neighbour=("NEIGHBOUR=$2"); shift ;;
	--name) name=$2; shift ;;
	--quiet) quiet=1 ;;
	*) echo "boot: unknown option $1 (see the top of $0)" >&2; exit 2 ;;
	esac
	shift
done
name=${name:-$arch-$cfg}
case "$numa" in
[1-8]) ;;
*) echo "boot: --numa takes 1 to 8 nodes" >&2; exit 2 ;;
esac
[ $((mem % numa)) = 0 ] || { echo "boot: --mem $mem does not split into $numa nodes" >&2; exit 2; }
obj=$build/obj/$arch-$cfg
logdir=$build/logs/$name
mkdir -p "$logdir"
rm -f "$logdir"/{console.log,results.log,summary.txt,counts}

# x86_64: one socket per CPU. The test kernels have no ACPI, so the
# guest learns its CPUs from SeaBIOS's MP table, which lists only the first
# CPU of each package: with QEMU's default topology (cores in one socket)
# the guest would boot with a single CPU.
smpspec=$smp
case "$arch" in
x86_64)
	smpspec="$smp,sockets=$smp,cores=1,threads=1"
	kernel=${kernel:-$obj/arch/x86/boot/bzImage}
	qemu=(qemu-system-x86_64 -M pc -cpu max
	      -serial "file:$logdir/console.log" -serial "file:$logdir/results.log")
	cmdline="console=ttyS0 thpscan.out=/dev/ttyS1"
	[ "$numa" = 1 ] || cmdline="$cmdline numa=fake=$numa"
	;;
arm64)
	kernel=${kernel:-$obj/arch/arm64/boot/Image}
	machine=virt
	[ "$mte" = 0 ] || machine=virt,mte=on
	qemu=(qemu-system-aarch64 -M "$machine" -cpu max,pauth-impdef=on
	      -serial "file:$logdir/console.log"
	      -device virtio-serial-device
	      -chardev "file,id=results,path=$logdir/results.log"
	      -device virtconsole,chardev=results)
	cmdline="console=ttyAMA0 thpscan.out=/dev/hvc0"
	if [ "$numa" != 1 ]; then
		# One memory backend per node; CPU c on node c % numa.
		for ((n = 0; n < numa; n++)); do
			node="node,nodeid=$n,memdev=mem$n"
			for ((c = n; c < smp; c += numa)); do
				node="$node,cpus=$c"
			done
			qemu+=(-object "memory-backend-ram,id=mem$n,size=$((mem / numa))M" -numa "$node")
		done
	fi
	;;
*) echo "boot: unknown --arch $arch (x86_64, arm64)" >&2; exit 2 ;;
esac
[ "$mte" = 0 ] || [ "$arch" = arm64 ] || { echo "boot: --mte is for --arch arm64" >&2; exit 2; }
[ -f "$kernel" ] || { echo "boot: no kernel at $kernel (make kernel ARCH=$arch CFG=$cfg)" >&2; exit 2; }
# panic=-1 and oops=panic end the guest at the first oops instead of
# letting it hang until the timeout.
cmdline="$cmdline panic=-1 oops=panic loglevel=7 thpscan.numa_nodes=$numa thpscan.cpus=$smp $append"

cmdfile=$logdir/cmd.sh
printf '%s\n' "$cmd" > "$cmdfile"
[ -n "$cmd" ] || : > "$cmdfile"
initrd=$logdir/initramfs.cpio
# The guest must be done (and have said what it did not run) before QEMU
# is killed: its deadline, by the host's clock (the guest reads it from its
# RTC), leaves a margin for the shutdown.
margin=$((timeout / 10))
[ "$margin" -ge 30 ] || margin=30
deadline=$((timeout - margin))
[ "$deadline" -ge 30 ] || deadline=30
test_timeout=${test_timeout:-$deadline}
env -u NEIGHBOUR "${neighbour[@]}" DEADLINE=$deadline DEADLINE_EPOCH=$(($(date +%s) + deadline)) \
	TEST_TIMEOUT=$test_timeout ROUNDS=${rounds:-1} "$top/qemu/mkinitramfs.sh" "$arch" "$initrd" "$tests" "$cmdfile" "${files[@]}"

[ "$quiet" = 1 ] || echo "boot: $name: $kernel, -m $mem -smp $smp, $numa NUMA node(s)," \
	"timeout ${timeout}s (deadline ${deadline}s, ${test_timeout}s per program)${icount[1]:+, -icount ${icount[1]}}, append: $append"
: > "$logdir/results.log"
start=$(date +%s.%N)
set +e
timeout -k 10 "$timeout" "${qemu[@]}" -accel tcg "${icount[@]}" -m "$mem" -smp "$smpspec" \
	-nodefaults -display none -monitor none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" "${qargs[@]}" &
qpid=$!
if [ "$quiet" = 1 ]; then
	wait $qpid
	rc=$?
else
	# Show the test output as it comes.
	tail -n +1 -f --pid=$qpid "$logdir/results.log" 2>/dev/null | sed -u "s/^/[$name] /" &
	tpid=$!
	wait $qpid
	rc=$?
	sleep 0.3
	kill $tpid 2>/dev/null
	wait $tpid 2>/dev/null
fi
set -e
secs=$(echo "$(date +%s.%N) - $start" | bc)
[ "$rc" = 124 ] && echo "boot: $name: QEMU killed after the ${timeout}s timeout" | tee -a "$logdir/results.log"

if [ -n "$rounds" ]; then
	# Every program ran --rounds times: the table of runs and failures.
	python3 "$top/qemu/flakes.py" --name "$name" --allow-name "$arch-$cfg" "$logdir" |
		tee "$logdir/summary.txt"
	exit "${PIPESTATUS[0]}"
fi
python3 "$top/qemu/results.py" --name "$name" --tree "$build/linux" \
	--qemu-rc "$rc" --seconds "$secs" --counts "$logdir/counts" \
	${cmd:+--expect-cmd} --expect-kunit "${EXPECT_KUNIT-all}" --expect-tests "$([ "$tests" = none ] || echo "$tests")" \
	"$logdir" | tee "$logdir/summary.txt"
exit "${PIPESTATUS[0]}"
