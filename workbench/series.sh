#!/bin/bash
# make series: the series as linux-mm would receive it, from patches/ and
# the overlay (still the source of truth: README.md, "The series"), in
# build/series/: git format-patch output with a cover letter, based on a
# git repository of the pristine tree (build/series-git, tag v<version>),
# and checked to apply there with git am and to give the same files as
# build/linux.
#
# The series, in review order (workbench/series/plan says which files and
# which commit message each patch takes):
#   - the patches/ that stand alone, at the bottom of patches/series
#     (stock fixes, with their Fixes: tags), as they are;
#   - patches that only the series has (workbench/series/NAME.patch): a
#     preparatory refactor that the quilt patches make in a later context;
#   - then groups of files of the final tree, each with a message of its
#     own in workbench/series/NAME.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
repo=$build/series-git
out=$build/series
plan=$top/workbench/series/plan
tarball=/usr/src/linux-source-6.12.tar.xz
die() { echo "series: error: $*" >&2; exit 1; }
. "$top/workbench/series-files.sh"

"$top/workbench/tree.sh" > /dev/null
kver=$(make -s -C "$tree" kernelversion)
base=v$kver
srcid=$(cat "$tree/.thp-scan-source")
# Fixed dates and committer: the same sources give the same commits.
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
# The committer (and the cover letter's sender) is the author of the
# series' first patch, whatever git's configuration on this machine.
first=$(grep -m1 '^quilt ' "$plan" | cut -d' ' -f2)
ident=$(sed -n '1s/^From: //p' "$top/patches/$first")
export GIT_COMMITTER_NAME="${ident% <*}" GIT_COMMITTER_EMAIL="${ident##*<}"
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}
g() { git -C "$repo" -c core.excludesFile=/dev/null -c advice.detachedHead=false "$@"; }

# --- the pristine tree as a git repository (kept between runs) ---------
if [ "$(cat "$repo/.git/thp-scan-source" 2>/dev/null)" != "$srcid" ]; then
	echo "series: making $repo from $tarball (about 2 minutes, once)"
	rm -rf "$repo"
	mkdir -p "$repo"
	tar -C "$repo" --strip-components=1 -xJf "$tarball"
	g init -q -b pristine
	# Debian's top-level .gitignore ignores everything outside debian/.
	g add -f -A
	GIT_AUTHOR_NAME="$GIT_COMMITTER_NAME" GIT_AUTHOR_EMAIL="$GIT_COMMITTER_EMAIL" \
		g commit -q -m "Linux $kver (Debian linux-source-6.12 $(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown))"
	g tag "$base"
	echo "$srcid" > "$repo/.git/thp-scan-source"
fi

# --- the files of the final tree that the series changes ----------------
# Every file that patches/ or the overlay touch, relative to the tree.
files=$( (cd "$tree" && QUILTRC="$top/workbench/quiltrc" quilt files -a 2>/dev/null;
	cat "$tree/.thp-scan-overlay") | sort -u)

# --- build the series on branch "series" ---------------------------------
g checkout -q -f -B series "$base"
g clean -q -f -d -x
n=0
# apply_group PATTERN-INCLUDE PATTERN-EXCLUDE: copy the final version of
# the files matching the first extended regex and not the second.
apply_group() {
	local sel
	sel=$(series_copy_final "$tree" "$repo" "$1" "$2" $files)
	[ -z "$sel" ] || g add -f -A -- $sel
}
while read -r kind arg rest; do
	case "$kind" in
	''|'#'*) continue ;;
	quilt|patch)
		# quilt: a patch of patches/ as it is; patch: one that only the
		# series has (workbench/series/NAME.patch, written against the
		# tree the lines above make).  Its header is the commit message.
		if [ "$kind" = quilt ]; then
			pf=$top/patches/$arg
		else
			pf=$top/workbench/series/$arg.patch
		fi
		[ -f "$pf" ] || die "plan: no $pf"
		g am -q --keep-cr "$pf" || die "$pf does not apply with git am after the lines above it"
		# A quilt header has no Date:, and git am then takes the
		# time of day, whatever GIT_AUTHOR_DATE says.
		g commit -q --amend --no-edit --date="$GIT_AUTHOR_DATE"
		;;
	group)
		# group NAME INCLUDE [EXCLUDE|- [FILE REGEX|- -]...] [peel=DIFF]:
		# the final version of the files matching INCLUDE and not
		# EXCLUDE, without each FILE's lines matching its REGEX (a
		# later group adds them), then DIFF applied: the edits that
		# take the final files back to what this patch alone makes of
		# them.
		read -r -a tok <<< "$rest"
		peel=
		if [ ${#tok[@]} -gt 0 ] && [ "${tok[-1]#peel=}" != "${tok[-1]}" ]; then
			peel=$top/workbench/series/${tok[-1]#peel=}
			unset 'tok[-1]'
		fi
		inc=${tok[0]:-} exc=${tok[1]:--}
		[ "$exc" != - ] || exc=
		msg=$top/workbench/series/$arg.txt
		[ -f "$msg" ] || die "plan: no $msg"
		apply_group "$inc" "$exc"
		drops=("${tok[@]:2}")
		for ((i = 0; i + 1 < ${#drops[@]}; i += 2)); do
			dfile=${drops[i]} dre=${drops[i + 1]}
			[ "$dfile" != - ] || continue
			# Only lines the series adds may be dropped.
			if grep -E "$dre" "$repo/$dfile" | grep -Fxq -f - <(g show "$base:$dfile" 2>/dev/null); then
				die "plan: group $arg: $dre drops lines of the pristine $dfile"
			fi
		done
		for dfile in $(series_drop "$repo" "${drops[@]}"); do
			g add -f -- "$dfile"
		done
		if [ -n "$peel" ]; then
			g apply --index "$peel" ||
				die "$peel does not apply to the final files: refresh it (README.md, \"The series\")"
		fi
		[ -n "$(g diff --cached --name-only)" ] || die "plan: group $arg changes nothing"
		author=$(sed -n 's/^From: //p' "$msg" | head -n 1)
		subject=$(sed -n 's/^Subject: //p' "$msg" | head -n 1)
		{ echo "$subject"; echo; sed '1,/^$/d' "$msg"; } > "$repo/.git/series-msg"
		g commit -q --author="$author" -F "$repo/.git/series-msg"
		;;
	*) die "plan: unknown line: $kind $arg $rest" ;;
	esac
	n=$((n + 1))
done < "$plan"

# Everything the tree has, the series has: same content, file by file.
for f in $files; do
	if [ -f "$tree/$f" ]; then
		cmp -s "$tree/$f" "$repo/$f" || die "$f differs between the series and $tree (a file no line of $plan covers?)"
	else
		[ ! -e "$repo/$f" ] || die "$f is in the series, not in $tree"
	fi
done

# --- format-patch with the cover letter -----------------------------------
rm -rf "$out"
g format-patch -q -o "$out" --cover-letter --base="$base" --thread=shallow "$base..series"
cover=$top/workbench/series/cover-letter.txt
python3 - "$out"/0000-cover-letter.patch "$cover" <<'PY'
import sys
path, cover = sys.argv[1], sys.argv[2]
text = open(path).read()
lines = open(cover).read().split('\n')
subject = lines[0]
body = '\n'.join(lines[1:]).strip('\n') + '\n'
if '*** SUBJECT HERE ***' not in text or '*** BLURB HERE ***' not in text:
    sys.exit('series: unexpected cover letter template')
text = text.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***', body)
open(path, 'w').write(text)
PY

# --- the series applies with git am to the pristine tree ------------------
g checkout -q -f -B series-am "$base"
g am -q $(ls "$out"/0*-*.patch | grep -v /0000-cover-letter.patch) 2> "$out/.am.log" < /dev/null ||
	{ grep -v '^$' "$out/.am.log" | head -n 20; g am --abort || true; die "the series does not apply with git am to $base"; }
[ -z "$(g diff series series-am)" ] || die "git am of $out gives another tree than the series"
g checkout -q -f series
echo "series: $(ls "$out"/0*.patch | grep -vc 0000-cover) patches and a cover letter in $out (base $base in $repo, branch series)"
g log --oneline "$base..series" | tac | nl -w2 -s'. '
