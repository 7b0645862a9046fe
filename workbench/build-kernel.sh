#!/bin/bash
# Build one kernel: workbench/build-kernel.sh ARCH CFG
#   ARCH: x86_64 | arm64      CFG: test | debug | bench | bench+lockstat
# Configuration: allnoconfig + configs/base.config + configs/ARCH.config +
# configs/CFG.config (scripts/kconfig/merge_config.sh -n), in the object
# folder build/obj/ARCH-CFG; a CFG of names joined by "+" merges each
# one's fragment in that order. Every requested option must survive into the
# final .config, or the build stops. ccache keeps rebuilds short.
#
# The tree is $BUILD/linux (BUILD: default build/).  A stock tree (the
# benchmark's build/stock/linux: Debian's tarball, no overlay, no patches)
# is recognised by its mm/Kconfig, which lacks the options that only the
# series adds (STOCK_DROP below): they are filtered out of the fragments,
# said so, and not counted as lost; every other option must survive as
# usual.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
arch=${1:?usage: build-kernel.sh ARCH CFG}
cfg=${2:?usage: build-kernel.sh ARCH CFG}
obj=$build/obj/$arch-$cfg

# shellcheck source=kmake.sh
. "$top/workbench/kmake.sh"
kmake_setup "$arch" || exit 1
frags=("$top/configs/base.config" "$top/configs/$arch.config")
IFS=+ read -r -a cfgs <<< "$cfg"
for c in "${cfgs[@]}"; do
	frags+=("$top/configs/$c.config")
done
for f in "${frags[@]}"; do
	[ -f "$f" ] || { echo "build-kernel: no fragment $f" >&2; exit 1; }
done

mkdir -p "$obj"

# Options the patch series adds: a stock tree, or a tree of the series'
# first patches (make check-series), lacks some of them.  Those that its
# mm/Kconfig does not define are filtered out of the fragments, said so,
# and not counted as lost.
STOCK_DROP='CONFIG_THP_SCAN[A-Z0-9_]*|CONFIG_THP_AUTO_KUNIT_TEST'
absent=()
for o in $(cat "${frags[@]}" | grep -Eo "^($STOCK_DROP)=" | tr -d = | sort -u); do
	grep -q "^config ${o#CONFIG_}\$" "$tree/mm/Kconfig" || absent+=("$o")
done
if [ ${#absent[@]} -gt 0 ]; then
	drop=$(IFS='|'; echo "${absent[*]}")
	fdir=$obj/stock-fragments
	mkdir -p "$fdir"
	stock=()
	for f in "${frags[@]}"; do
		grep -Ev "^($drop)=" "$f" > "$fdir/$(basename "$f")" || true
		stock+=("$fdir/$(basename "$f")")
	done
	echo "build-kernel: stock tree, or the series' first patches ($tree): without ${absent[*]}"
	frags=("${stock[@]}")
fi

sum=$(cat "${frags[@]}" | sha1sum | cut -d' ' -f1)
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.thp-scan-config" 2>/dev/null)" != "$sum" ] ||
   [ "$tree/mm/Kconfig" -nt "$obj/.config" ]; then
	echo "build-kernel: configuring $arch-$cfg"
	log=$obj/merge_config.log
	(cd "$tree" && ARCH=$karch CROSS_COMPILE=$cross \
		scripts/kconfig/merge_config.sh -n -O "$obj" "${frags[@]}") > "$log" 2>&1 ||
		{ cat "$log" >&2; exit 1; }
	# merge_config.sh only warns when a requested value is lost.  An
	# option asked to be "not set" that is absent because what it depends
	# on is off (configs/nothpscan.config: THP_SCAN_KUNIT_TEST without
	# THP_SCAN) is not set: that is not a loss.
	if grep -A2 '^Value requested for' "$log" |
	   awk '/^Value requested/ { o = $4 } /^Requested value:/ { r = $0 }
		/^Actual value:/ { if (!(r ~ /is not set$/ && $0 ~ /^Actual value:[[:space:]]*$/)) print o }' |
	   grep -q .; then
		grep -A2 '^Value requested for' "$log" >&2
		echo "build-kernel: $arch-$cfg: options above did not survive (missing dependency?)" >&2
		exit 1
	fi
	echo "$sum" > "$obj/.thp-scan-config"
fi

echo "build-kernel: building $arch-$cfg in $obj"
start=$(date +%s)
kmake "$obj" -s -j"$(nproc)" "$target"
echo "build-kernel: $arch-$cfg: $obj/$image ($(($(date +%s) - start)) s)"
