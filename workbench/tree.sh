#!/bin/bash
# Assemble the patched kernel tree in build/linux:
#   Debian's linux-source-6.12 tarball, unpacked once,
#   + the overlay (files this repository adds, at their kernel paths),
#   + patches/series applied with quilt (patches/ is a symlink to the repo's).
# Re-running is cheap: nothing is unpacked again unless the tarball changed,
# quilt runs only when the series changed, and files whose content did not
# change keep their timestamps so that make rebuilds only what changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
tarball=/usr/src/linux-source-6.12.tar.xz
# Top-level kernel folders under which the repository adds new files.
overlay_dirs="mm include Documentation tools"

die() { echo "tree: error: $*" >&2; exit 1; }
series_list() { grep -v '^[[:space:]]*\(#\|$\)' "$top/patches/series" 2>/dev/null || true; }
# The top patch's name and hunks as tree.sh applied it (.thp-scan-top):
# with this, a top patch that a checkout or pull changed is told apart
# from edits made in the tree and not refreshed into it.
top_hunks() { echo "$1"; sed -n '/^--- a\//,$p'; }
top_as_applied() {
	[ -f .thp-scan-top ] && quilt diff -P "$1" 2>/dev/null | top_hunks "$1" | cmp -s - .thp-scan-top
}

[ -f "$tarball" ] || die "$tarball is missing (run: workbench/install-deps.sh)"
debver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
srcid="$(stat -c '%s %Y' "$tarball") $debver"

if [ ! -f "$tree/.thp-scan-source" ] || [ "$(cat "$tree/.thp-scan-source")" != "$srcid" ]; then
	echo "tree: unpacking $tarball (Debian $debver)"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -C "$tree.tmp" --strip-components=1 -xJf "$tarball"
	# Objects built from another source tree would look newer than the
	# freshly unpacked (old-timestamped) sources: start the builds over.
	rm -rf "$build/obj"
	echo "$srcid" > "$tree.tmp/.thp-scan-source"
	mv "$tree.tmp" "$tree"
fi

cd "$tree"
kver=$(make -s kernelversion)

# --- quilt -------------------------------------------------------------
ln -sfn "$top/patches" patches
export QUILTRC="$top/workbench/quiltrc"
want=$( (cd "$top/patches" && cat series && series_list | while read -r f; do
	cat "$f" 2>/dev/null || echo "missing $f"; done) | sha1sum | cut -d' ' -f1)
have=$(cat .thp-scan-series 2>/dev/null || true)
# The stamp says what tree.sh pushed; a pop or push by hand makes it wrong.
if [ "$want" = "$have" ] && [ "$(quilt applied 2>/dev/null || true)" != "$(series_list)" ]; then
	have=
fi
if [ "$want" != "$have" ]; then
	before=$(mktemp)
	# A checkout or merge that adds or removes a patch below the top leaves
	# a series that no longer matches the applied patches, and quilt then
	# refuses to work: look at them through a series of the applied ones.
	applied_series=
	if [ -s .pc/applied-patches ] && ! quilt applied >/dev/null 2>&1; then
		applied_series=$(mktemp)
		cp .pc/applied-patches "$applied_series"
		echo "$applied_series" > .pc/.quilt_series
	fi
	restore_series() {
		if [ -n "$applied_series" ]; then
			echo series > .pc/.quilt_series
			rm -f "$applied_series"
		fi
	}
	# Content and timestamp of every file the applied patches touch.
	if [ -d .pc ] && quilt applied >/dev/null 2>&1; then
		# Never throw away work: the top patch must be refreshed.
		top_patch=$(quilt top 2>/dev/null || true)
		if [ ! -f "patches/$top_patch" ] ||
		   { [ -n "$(quilt diff -z 2>/dev/null)" ] && ! top_as_applied "$top_patch"; }; then
			restore_series
			die "$tree has changes not in patches/$top_patch: run 'make quilt ARGS=refresh' first"
		fi
		quilt files -a 2>/dev/null | sort -u | while read -r f; do
			if [ -f "$f" ]; then
				echo "$f $(stat -c %Y "$f") $(sha1sum < "$f" | cut -d' ' -f1)"
			else
				echo "$f 0 none"
			fi
		done > "$before"
		quilt pop -a -f -q >/dev/null
	fi
	restore_series
	if [ -n "$(series_list)" ]; then
		if ! out=$(quilt push -a -q 2>&1); then
			echo "$out" >&2
			die "a patch in patches/series does not apply to Linux $kver (Debian linux-source-6.12 $debver): $(quilt next 2>/dev/null || echo '?') (fix it with quilt in $tree)"
		fi
	fi
	# A file whose content is back to what it was keeps its old timestamp;
	# any other file the old or new series touches is marked as changed.
	after=$( (quilt files -a 2>/dev/null || true; cut -d' ' -f1 "$before") | sort -u)
	for f in $after; do
		[ -f "$f" ] || continue
		old=$(grep -m1 "^$f " "$before" || true)
		sum=$(sha1sum < "$f" | cut -d' ' -f1)
		if [ -n "$old" ] && [ "${old##* }" = "$sum" ]; then
			touch -d "@$(echo "$old" | cut -d' ' -f2)" "$f"
		else
			touch "$f"
		fi
	done
	rm -f "$before"
	top_patch=$(quilt top 2>/dev/null || true)
	if [ -n "$top_patch" ]; then
		top_hunks "$top_patch" < "patches/$top_patch" > .thp-scan-top
	else
		rm -f .thp-scan-top
	fi
	echo "$want" > .thp-scan-series
fi

# --- overlay -----------------------------------------------------------
manifest=.thp-scan-overlay
list=$( (cd "$top" && find $overlay_dirs -type f 2>/dev/null || true) | sort)
if [ -f "$manifest" ]; then
	comm -23 "$manifest" <(echo "$list") | while read -r f; do
		if [ -n "$f" ]; then rm -f "$f"; fi
	done
fi
for f in $list; do
	if [ -e "$f" ] && ! grep -qx "$f" "$manifest" 2>/dev/null; then
		die "overlay file $f exists upstream: change upstream files with a quilt patch"
	fi
	if ! cmp -s "$top/$f" "$f"; then
		mkdir -p "$(dirname "$f")"
		cp "$top/$f" "$f"
	fi
done
echo "$list" > "$manifest"

napplied=$( (quilt applied 2>/dev/null || true) | grep -c . || true)
echo "tree: Linux $kver from Debian linux-source-6.12 $debver in $tree," \
	"$napplied patches applied, $(echo "$list" | grep -c . || true) overlay files"
