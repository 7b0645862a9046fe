#!/bin/bash
# Refresh the peels of workbench/series/ after a change to the final files
# that the earlier patches of the series must not see (README.md, "The
# series"): each peel becomes the edits that take the new final files of
# its group back to the state its patch had before the change.
#
#   workbench/series-repeel.sh OLD_BUILD
#
# OLD_BUILD is the build folder of a checkout of the commit before the
# change, in which `make series` ran (BUILD=OLD_BUILD make series): its
# series-git holds each patch's state as a commit on branch "series".
# The new final files are this checkout's build/linux (workbench/tree.sh
# runs first).  The plan must have the same lines as it had there.  Run
# `make series` afterwards: the patches before the change come out as the
# same commits (compare with `git -C OLD_BUILD/series-git log series`).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
plan=$top/workbench/series/plan
die() { echo "series-repeel: error: $*" >&2; exit 1; }
. "$top/workbench/series-files.sh"

[ $# -eq 1 ] || die "usage: workbench/series-repeel.sh OLD_BUILD"
old=$(cd "$1" && pwd)/series-git
[ -d "$old/.git" ] || die "no $old: run BUILD=$1 make series in the old checkout first"
"$top/workbench/tree.sh" > /dev/null
kver=$(make -s -C "$tree" kernelversion)
files=$( (cd "$tree" && QUILTRC="$top/workbench/quiltrc" quilt files -a 2>/dev/null;
	cat "$tree/.thp-scan-overlay") | sort -u)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --shared --no-checkout "$old" "$work/r"
g() { git -C "$work/r" -c core.excludesFile=/dev/null -c advice.detachedHead=false "$@"; }
mapfile -t commits < <(g rev-list --reverse "v$kver..origin/series")
lines=$(grep -cEv '^[[:space:]]*(#|$)' "$plan")
[ "${#commits[@]}" -eq "$lines" ] ||
	die "$old has ${#commits[@]} patches, the plan $lines lines: not the same plan"

n=0
while read -r kind arg rest; do
	case "$kind" in
	''|'#'*) continue ;;
	esac
	c=${commits[$n]}
	n=$((n + 1))
	[ "$kind" = group ] || continue
	read -r -a tok <<< "$rest"
	[ ${#tok[@]} -gt 0 ] && [ "${tok[-1]#peel=}" != "${tok[-1]}" ] || continue
	peel=$top/workbench/series/${tok[-1]#peel=}
	unset 'tok[-1]'
	inc=${tok[0]:-} exc=${tok[1]:--}
	[ "$exc" != - ] || exc=
	g checkout -q -f --detach "$c"
	g clean -q -f -d -x
	mapfile -t sel < <(series_copy_final "$tree" "$work/r" "$inc" "$exc" $files)
	series_drop "$work/r" "${tok[@]:2}" > /dev/null
	g add -f -A -- "${sel[@]}"
	# From the new final files (the index) back to the patch's state (HEAD).
	g diff --cached -R -- "${sel[@]}" > "$peel.new"
	if cmp -s "$peel" "$peel.new"; then
		rm -f "$peel.new"
		echo "series-repeel: $arg: peel unchanged"
	else
		mv "$peel.new" "$peel"
		echo "series-repeel: $arg: peel refreshed ($(grep -c '^diff --git' "$peel") files)"
	fi
done < "$plan"
