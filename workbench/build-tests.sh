#!/bin/bash
# Build the static in-guest test programs for ARCH into build/tests/ARCH/:
#   workbench/build-tests.sh ARCH
# Every tools/testing/selftests/mm/thp_scan_*.c and thp_policy_*.c of the
# assembled tree but thp_scan_util.c is a test (kselftest harness, TAP output),
# linked with the mm selftests' vm_util.c and thp_settings.c (and with
# thp_scan_util.c, their shared helpers, if it includes thp_scan_util.h) and
# compiled against the tree's own UAPI headers (make headers_install), as the
# kselftests are.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
arch=${1:?usage: build-tests.sh ARCH}

case "$arch" in
x86_64) karch=x86_64; cc=gcc ;;
arm64) karch=arm64; cc=aarch64-linux-gnu-gcc ;;
*) echo "build-tests: unknown ARCH $arch" >&2; exit 1 ;;
esac
out=$build/tests/$arch
hdr=$build/headers/$arch
mkdir -p "$out" "$hdr"

# The tree's UAPI headers, installed again only when the tree changed.
if [ ! -f "$hdr/include/linux/mman.h" ] || [ "$tree/.thp-scan-series" -nt "$hdr/include/linux/mman.h" ]; then
	make -s -C "$tree" O="$hdr/obj" ARCH="$karch" INSTALL_HDR_PATH="$hdr" headers_install
	touch "$hdr/include/linux/mman.h"
fi

sel=$tree/tools/testing/selftests
cflags=(-static -O2 -g -Wall
	-D_GNU_SOURCE -isystem "$hdr/include" -I "$sel" -I "$sel/mm")
# vm_util.c and thp_settings.c: compiled once, linked into every program;
# thp_scan_util.c (which includes both headers) too, into those that use it.
lib=$out/.lib
mkdir -p "$lib"
libs=()
for l in vm_util thp_settings thp_scan_util; do
	if [ ! -f "$lib/$l.o" ] || [ "$sel/mm/$l.c" -nt "$lib/$l.o" ] ||
	   [ "$sel/mm/$l.h" -nt "$lib/$l.o" ] || [ "$hdr/include/linux/mman.h" -nt "$lib/$l.o" ] ||
	   { [ $l = thp_scan_util ] && { [ "$sel/mm/vm_util.h" -nt "$lib/$l.o" ] ||
	     [ "$sel/mm/thp_settings.h" -nt "$lib/$l.o" ]; }; }; then
		"$cc" "${cflags[@]}" -c -o "$lib/$l.o" "$sel/mm/$l.c"
	fi
	[ $l = thp_scan_util ] || libs+=("$lib/$l.o")
done

# The programs, as many at once as there are CPUs.
jobs=$(nproc)
pids=() bad=0
: > "$out/tests.list.new"
for src in "$sel"/mm/thp_scan_*.c "$sel"/mm/thp_policy_*.c; do
	t=$(basename "$src" .c)
	[ "$t" != thp_scan_util ] || continue
	# *_boot tests check boot parameters: test.sh runs them in their own boots.
	case "$t" in
	*_boot) ;;
	*) echo "$t" >> "$out/tests.list.new" ;;
	esac
	util=()
	if grep -q '^#include "thp_scan_util.h"' "$src"; then
		util=("$lib/thp_scan_util.o")
	fi
	if [ ! -x "$out/$t" ] || [ "$src" -nt "$out/$t" ] ||
	   [ "$lib/vm_util.o" -nt "$out/$t" ] || [ "$lib/thp_settings.o" -nt "$out/$t" ] ||
	   { [ ${#util[@]} -gt 0 ] && { [ "$lib/thp_scan_util.o" -nt "$out/$t" ] ||
	     [ "$sel/mm/thp_scan_util.h" -nt "$out/$t" ]; }; }; then
		if [ ${#pids[@]} -ge "$jobs" ]; then
			wait "${pids[0]}" || bad=1
			pids=("${pids[@]:1}")
		fi
		"$cc" "${cflags[@]}" -o "$out/$t" "$src" "${libs[@]}" "${util[@]}" -lm &
		pids+=($!)
	fi
done
for p in "${pids[@]}"; do
	wait "$p" || bad=1
done
[ $bad = 0 ] || { echo "build-tests: $arch: a program did not compile (above)" >&2; exit 1; }
mv "$out/tests.list.new" "$out/tests.list"

# Helper programs for the demo and for manual runs (not tests).
: > "$out/helpers.list"
for src in "$top"/workbench/guest/*.c; do
	h=$(basename "$src" .c)
	echo "$h" >> "$out/helpers.list"
	# A helper that includes thp_scan_util.h links it like the tests.
	if grep -q '^#include "thp_scan_util.h"' "$src"; then
		if [ ! -x "$out/$h" ] || [ "$src" -nt "$out/$h" ] || [ "$lib/thp_scan_util.o" -nt "$out/$h" ]; then
			"$cc" "${cflags[@]}" -o "$out/$h" "$src" "${libs[@]}" "$lib/thp_scan_util.o" -lm
		fi
	elif [ ! -x "$out/$h" ] || [ "$src" -nt "$out/$h" ]; then
		"$cc" -static -O2 -Wall -o "$out/$h" "$src"
	fi
done
# Guest scripts run as programs in boots of their own, not in tests.list:
# trace_cmd needs Debian's trace-cmd (qemu/boot.sh --root-files).
for src in "$top"/workbench/guest/*.sh; do
	install -m 0755 "$src" "$out/$(basename "$src" .sh)"
done
echo "build-tests: $arch: tests: $(tr '\n' ' ' < "$out/tests.list")helpers: $(tr '\n' ' ' < "$out/helpers.list")"
