# Sourced by workbench/series.sh and workbench/series-repeel.sh.
#
# series_drop DEST FILE REGEX [FILE REGEX]...: each FILE of DEST without
# its lines matching its extended REGEX (lines a later group adds); a
# FILE of "-" is no file.  Prints the files, one a line.
series_drop() {
	local dest=$1 f re
	shift
	while [ $# -ge 2 ]; do
		f=$1 re=$2
		shift 2
		[ "$f" != - ] || continue
		{ grep -Ev "$re" "$dest/$f" || true; } > "$dest/$f.series-drop"
		mv "$dest/$f.series-drop" "$dest/$f"
		echo "$f"
	done
}
#
# series_copy_final TREE DEST INCLUDE EXCLUDE FILE...: the final version
# (in TREE) of each FILE matching the extended regex INCLUDE and not
# EXCLUDE (empty: none) copied into DEST, or removed from DEST where TREE
# has none; prints the files, one a line.
series_copy_final() {
	local tree=$1 dest=$2 inc=$3 exc=$4 f
	shift 4
	for f in "$@"; do
		echo "$f" | grep -Eq "$inc" || continue
		[ -z "$exc" ] || ! echo "$f" | grep -Eq "$exc" || continue
		if [ -f "$tree/$f" ]; then
			mkdir -p "$dest/$(dirname "$f")"
			cp "$tree/$f" "$dest/$f"
		else
			rm -f "$dest/$f"
		fi
		echo "$f"
	done
}
