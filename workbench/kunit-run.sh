#!/bin/bash
# kunit.py run on the assembled tree: workbench/kunit-run.sh ARCH [kunit.py args]
# Builds its own kernel from kunit/thp_scan.kunitconfig in build/kunit/ARCH
# (ccache'd) and runs it in QEMU (TCG), as kunit.py does.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
arch=${1:?usage: kunit-run.sh ARCH [kunit.py args]}
shift
case "$arch" in
x86_64) cross=() cc="ccache gcc" ;;
arm64) cross=(--cross_compile=aarch64-linux-gnu-) cc="ccache aarch64-linux-gnu-gcc" ;;
*) echo "kunit-run: unknown ARCH $arch" >&2; exit 1 ;;
esac
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/thp-scan/ccache} CCACHE_BASEDIR=$build CCACHE_NOHASHDIR=1
mkdir -p "$build/kunit"
cd "$build/linux"
exec python3 tools/testing/kunit/kunit.py run --arch="$arch" "${cross[@]}" \
	--kunitconfig="$top/kunit/thp_scan.kunitconfig" --build_dir="$build/kunit/$arch" \
	--make_options "CC=$cc" --jobs="$(nproc)" --timeout=600 "$@"
