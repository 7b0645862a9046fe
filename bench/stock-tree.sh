#!/bin/bash
# Unpack stock Linux 6.12 for the benchmark into build/stock/linux:
# Debian's linux-source-6.12 tarball as it is (no overlay, no patches),
# the same source build/linux is assembled from.  Unpacked again only when
# the package changes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/stock/linux
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || { echo "stock-tree: $tarball is missing (run: workbench/install-deps.sh)" >&2; exit 1; }
debver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
srcid="$(stat -c '%s %Y' "$tarball") $debver"
if [ ! -f "$tree/.thp-scan-source" ] || [ "$(cat "$tree/.thp-scan-source")" != "$srcid" ]; then
	echo "stock-tree: unpacking $tarball (Debian $debver) into $tree"
	rm -rf "$tree" "$tree.tmp" "$build/stock/obj"
	mkdir -p "$tree.tmp"
	tar -C "$tree.tmp" --strip-components=1 -xJf "$tarball"
	echo "$srcid" > "$tree.tmp/.thp-scan-source"
	mv "$tree.tmp" "$tree"
fi
if grep -q '^config THP_SCAN$' "$tree/mm/Kconfig"; then
	echo "stock-tree: $tree has CONFIG_THP_SCAN: not a stock tree" >&2
	exit 1
fi
echo "stock-tree: Linux $(make -s -C "$tree" kernelversion) from Debian linux-source-6.12 $debver in $tree (no patches)"
