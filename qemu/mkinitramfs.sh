#!/bin/bash
# mkinitramfs.sh ARCH OUT.cpio TESTS CMDFILE [EXTRA_FILE[:GUEST_PATH] ...]
# Builds the guest initramfs (newc cpio, uncompressed): busybox-static for
# ARCH, qemu/init, the static test programs of build/tests/ARCH named in
# TESTS (space-separated; "all" or "none"), the extra command CMDFILE, and
# extra files (by default into /extra/).  The guest's time limits (see
# qemu/init) come from the environment: TEST_TIMEOUT (seconds per program,
# default 600), DEADLINE_EPOCH (the host's time, in seconds since the
# epoch, after which no program starts; the guest reads the host's time
# from its RTC) and DEADLINE (the same in seconds of uptime, for a guest
# without an RTC); 0: none.  ROUNDS: how many times the programs run
# (default 1).  NEIGHBOUR: a shell command that init runs in the
# background while the programs run (default: none).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=$1 out=$2 tests=$3 cmdfile=$4
shift 4

case "$arch" in
x86_64) bb=/bin/busybox ;;
arm64) bb=${BB_ARM64:-/var/cache/thp-scan/busybox-arm64} ;;
*) echo "mkinitramfs: unknown ARCH $arch" >&2; exit 1 ;;
esac
[ -x "$bb" ] || { echo "mkinitramfs: no busybox for $arch at $bb (run workbench/install-deps.sh)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,tests,extra,etc/thp-scan}
cp "$bb" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
install -m 0755 "$top/qemu/init" "$stage/init"

testdir=$build/tests/$arch
case "$tests" in
all) tests=$(cat "$testdir/tests.list") ;;
none) tests= ;;
esac
for t in $tests; do
	[ -x "$testdir/$t" ] || { echo "mkinitramfs: no test program $testdir/$t" >&2; exit 1; }
	cp "$testdir/$t" "$stage/tests/"
done
# Helpers the tests run (not tests themselves).
for h in $(cat "$testdir/helpers.list" 2>/dev/null); do
	cp "$testdir/$h" "$stage/tests/"
done
echo "$tests" > "$out.tests"
echo "$tests" | tr ' ' '\n' | grep . > "$stage/etc/thp-scan/tests" || true
cp "$cmdfile" "$stage/etc/thp-scan/cmd"
echo "${TEST_TIMEOUT:-600}" > "$stage/etc/thp-scan/test-timeout"
echo "${DEADLINE:-0}" > "$stage/etc/thp-scan/deadline"
echo "${DEADLINE_EPOCH:-0}" > "$stage/etc/thp-scan/deadline-epoch"
echo "${ROUNDS:-1}" > "$stage/etc/thp-scan/rounds"
[ -z "${NEIGHBOUR:-}" ] || printf '%s\n' "$NEIGHBOUR" > "$stage/etc/thp-scan/neighbour"

for spec in "$@"; do
	src=${spec%%:*}
	dst=/extra/$(basename "$src")
	[ "$spec" != "$src" ] && dst=${spec#*:}
	[ -e "$src" ] || { echo "mkinitramfs: no such file $src" >&2; exit 1; }
	mkdir -p "$stage$(dirname "$dst")"
	cp -a "$src" "$stage$dst"
done

(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) > "$out"
