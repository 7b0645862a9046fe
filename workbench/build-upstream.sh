#!/bin/bash
# Build the upstream mm selftests that exercise THP, unmodified from the
# assembled tree (tools/testing/selftests/mm), statically for ARCH:
#   workbench/build-upstream.sh ARCH
# into build/tests/ARCH/upstream/ (copied to the guest's /upstream), with
# the guest programs that run them: upstream_mm (every test of
# workbench/upstream/tests) and upstream_mm_quick (the "quick" ones), both
# workbench/upstream/run.sh, in build/tests/ARCH/.  Flags as the
# selftests' Makefile sets them (-Wall -O2, the tree's UAPI headers and
# tools/include/uapi, -D_GNU_SOURCE= from lib.mk, -U_FORTIFY_SOURCE, -lrt -lpthread -lm), with one
# addition: khugepaged.c uses KSFT_SKIP without including kselftest.h
# (6.12's own build of it fails the same way), so it gets
# -include ../kselftest.h.  The sources are not changed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
arch=${1:?usage: build-upstream.sh ARCH}

case "$arch" in
x86_64) karch=x86_64; cc=gcc ;;
arm64) karch=arm64; cc=aarch64-linux-gnu-gcc ;;
*) echo "build-upstream: unknown ARCH $arch" >&2; exit 1 ;;
esac
out=$build/tests/$arch/upstream
hdr=$build/headers/$arch
mkdir -p "$out" "$hdr"

if [ ! -f "$hdr/include/linux/mman.h" ] || [ "$tree/.thp-scan-series" -nt "$hdr/include/linux/mman.h" ]; then
	make -s -C "$tree" O="$hdr/obj" ARCH="$karch" INSTALL_HDR_PATH="$hdr" headers_install
	touch "$hdr/include/linux/mman.h"
fi

mm=$tree/tools/testing/selftests/mm
# local_config.h as mm/check_config.sh writes it without liburing (cow
# and gup_longterm then leave out their io_uring cases), kept out of the tree.
cfg=$build/tests/$arch/upstream-config
mkdir -p "$cfg"
echo "// No liburing support found" > "$cfg/local_config.h"
cflags=(-static -Wall -O2 -D_GNU_SOURCE= -I "$tree" -I "$cfg" -isystem "$hdr/include"
	-isystem "$tree/tools/include/uapi" -U_FORTIFY_SOURCE)
libs=(-lrt -lpthread -lm)
# libnuma.a (ksm_tests, migration): Debian's libnuma-dev on x86_64, its
# arm64 package's files fetched by workbench/install-deps.sh.
numa=()
if [ "$arch" = arm64 ]; then
	nd=${BB_ARM64_DIR:-/var/cache/thp-scan}/libnuma-arm64
	numa=(-I "$nd/include" -L "$nd/lib")
fi
# PROGRAM: its sources beyond PROGRAM.c, and extra flags.
build() { # PROGRAM EXTRA...
	local p=$1 src=()
	shift
	src=("$mm/$p.c" "$mm/vm_util.c" "$mm/thp_settings.c")
	[ "$p" = uffd-unit-tests ] && src+=("$mm/uffd-common.c")
	local extra=()
	case "$p" in ksm_tests|migration) extra=("${numa[@]}" -lnuma) ;; esac
	local newer=0 f
	for f in "${src[@]}" "$mm"/*.h; do
		[ "$f" -nt "$out/$p" ] && newer=1
	done
	[ -x "$out/$p" ] && [ $newer = 0 ] && return 0
	(cd "$mm" && "$cc" "${cflags[@]}" "$@" -o "$out/$p" "${src[@]}" "${extra[@]}" "${libs[@]}")
}
build split_huge_page_test
build khugepaged -include ../kselftest.h
build cow
build transhuge-stress
build soft-dirty
build uffd-unit-tests
build ksm_tests
build ksm_functional_tests
build migration
# Not upstream's: the reproducer of the userfaultfd race that the series'
# userfaultfd fix closes (README.md, "Upstream mm selftests"), run by the
# same runner as a test (-e).
urace=$top/workbench/upstream/uffd_unregister_race.c
if [ ! -x "$out/uffd_unregister_race" ] || [ "$urace" -nt "$out/uffd_unregister_race" ]; then
	"$cc" -static -O2 -Wall -pthread -isystem "$hdr/include" -o "$out/uffd_unregister_race" "$urace"
fi

cp "$top/workbench/upstream/tests" "$out/tests"
for p in upstream_mm upstream_mm_quick; do
	install -m 0755 "$top/workbench/upstream/run.sh" "$build/tests/$arch/$p"
done
echo "build-upstream: $arch: $(cd "$out" && ls --ignore=tests | tr '\n' ' ')"
