#!/bin/bash
# Build the static in-guest test programs for ARCH into build/tests/ARCH/:
#   workbench/build-tests.sh ARCH
# Every tools/testing/selftests/mm/thp_scan_*.c and thp_policy_*.c of the
# assembled tree is a test (kselftest harness, TAP output), linked with the mm selftests'
# vm_util.c and thp_settings.c and compiled against the tree's own UAPI
# headers (make headers_install), as the kselftests are.
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
libs=("$sel/mm/vm_util.c" "$sel/mm/thp_settings.c")

: > "$out/tests.list.new"
for src in "$sel"/mm/thp_scan_*.c "$sel"/mm/thp_policy_*.c; do
	t=$(basename "$src" .c)
	# *_boot tests check boot parameters: test.sh runs them in their own boots.
	case "$t" in
	*_boot) ;;
	*) echo "$t" >> "$out/tests.list.new" ;;
	esac
	if [ ! -x "$out/$t" ] || [ "$src" -nt "$out/$t" ] ||
	   [ "$sel/mm/vm_util.c" -nt "$out/$t" ] || [ "$sel/mm/thp_settings.c" -nt "$out/$t" ] ||
	   [ "$sel/mm/thp_scan_util.h" -nt "$out/$t" ]; then
		"$cc" "${cflags[@]}" -o "$out/$t" "$src" "${libs[@]}" -lm
	fi
done
mv "$out/tests.list.new" "$out/tests.list"

# Helper programs for the demo and for manual runs (not tests).
: > "$out/helpers.list"
for src in "$top"/workbench/guest/*.c; do
	h=$(basename "$src" .c)
	echo "$h" >> "$out/helpers.list"
	if [ ! -x "$out/$h" ] || [ "$src" -nt "$out/$h" ]; then
		"$cc" -static -O2 -Wall -o "$out/$h" "$src"
	fi
done
echo "build-tests: $arch: tests: $(tr '\n' ' ' < "$out/tests.list")helpers: $(tr '\n' ' ' < "$out/helpers.list")"
