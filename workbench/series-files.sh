# Sourced by workbench/series.sh and workbench/series-repeel.sh.
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
