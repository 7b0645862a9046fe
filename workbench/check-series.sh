#!/bin/bash
# make check-series (on demand, not in the test command): make the series
# (workbench/series.sh), then apply it patch by patch in a git worktree of
# the pristine tree and, after each patch:
#   - build the x86_64 test kernel (configs: base + x86_64 + test, so
#     CONFIG_THP_SCAN=y once the patch that adds it is in);
#   - at every fifth patch and the last: the same with CONFIG_THP_SCAN=n
#     (configs/nothpscan.config) and the arm64 test kernel;
#   - scripts/checkpatch.pl --strict on the patch;
#   - on the C files the patch touches: W=1 and sparse (C=2) on their
#     objects, the findings the tree before the patch does not have
#     (compared without line numbers: 6.12 has sparse warnings of its own
#     in mm/), and scripts/kernel-doc -none on them and on the headers;
# and, on the last patch: coccicheck on the new C files, and the docs
# (make htmldocs SPHINXDIRS="mm admin-guide", Debian's sphinx) compared
# with the pristine tree's: no warning may name a file the series touches.
# Prints a table: patch, builds, warnings; exits 1 on any failure or
# warning.  Objects: build/series-check/obj/ (kept: ccache and make keep
# a second run short).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
W=$top/workbench
repo=$build/series-git
out=$build/series
cb=$build/series-check
tree=$cb/linux
logs=$cb/logs
"$W/series.sh" || exit 1
. "$W/kmake.sh"
g() { git -C "$repo" "$@"; }

for p in python3-sphinx python3-sphinx-rtd-theme python3-ply; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && continue
	echo "check-series: installing $p (the docs build; ply: checkpatch's SPDX check)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" > /dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" > /dev/null; }
done

mkdir -p "$cb" "$logs"
if [ ! -e "$tree/.git" ]; then
	rm -rf "$tree"
	g worktree prune
	g worktree add -q --detach "$tree" series
fi
base=$(g describe --tags --abbrev=0 series)
mapfile -t commits < <(g rev-list --reverse "$base..series")
npatch=${#commits[@]}
mapfile -t pfiles < <(ls "$out"/0*.patch | grep -v /0000-cover-letter.patch)
bad=0
rows=()

# build NAME ARCH CFG: build-kernel.sh on the worktree; the log's
# compiler warnings are counted.
build() {
	local name=$1 arch=$2 cfg=$3 log=$logs/$i-${1// /-}.log
	if BUILD=$cb "$W/build-kernel.sh" "$arch" "$cfg" > "$log" 2>&1; then
		nw=$(grep -c 'warning:' "$log")
		res="$name ok"
		[ "$nw" = 0 ] || { res="$name ok, $nw warnings"; bad=1; }
	else
		res="$name FAILED"
		bad=1
	fi
	built+=("$res")
}

# findings KIND OBJ...: the W=1 or sparse findings on the objects of the
# tree as it is, without line and column (so that a finding the patch did
# not add is recognised wherever the patch moved it), sorted.
findings() {
	local kind=$1
	shift
	kmake_setup x86_64
	if [ "$kind" = w1 ]; then
		# W=1 changes the objects' command line: make compiles them again.
		kmake "$cb/obj/x86_64-test" W=1 "$@" 2>&1 | grep 'warning:'
	else
		# C=2: sparse on them whatever their state.
		kmake "$cb/obj/x86_64-test" C=2 "$@" 2>&1 | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):'
	fi | sed -E "s|^$tree/||; s|:[0-9]+:[0-9]+:|:|" | sort
}

# cp_filter: checkpatch's findings on stdin (one block each: "TYPE:NAME:
# message", then "#N: FILE: path:line:" and the lines), less those that
# check.sh lets through for the same files; the blocks that are left go to
# stdout.
cp_filter() {
	python3 -c '
import re, sys
skip = [(re.compile(r"include/trace/events/"),
         {"COMPLEX_MACRO", "CAMELCASE", "MACRO_ARG_UNUSED", "TRAILING_SEMICOLON"}),
        (re.compile(r"tools/testing/selftests/mm/thp_scan_util\.c$"), {"LONG_LINE_STRING"})]
for block in sys.stdin.read().split("\n\n"):
    m = re.match(r"(ERROR|WARNING|CHECK):([A-Z_0-9]+):", block)
    if not m:
        continue
    f = re.search(r"FILE: ([^:]+):", block)
    if f and any(p.search(f.group(1)) and m.group(2) in t for p, t in skip):
        continue
    print(block + "\n")
'
}

# mm_objs FILE...: the objects of the C files under mm/ among FILEs that
# the x86_64 test build of the tree as it is has.
mm_objs() {
	local f
	for f in "$@"; do
		case "$f" in
		mm/*.c) [ -f "$cb/obj/x86_64-test/${f%.c}.o" ] && echo "${f%.c}.o" ;;
		esac
	done
	return 0
}

# The pristine tree, built, is where the first patch's findings are
# compared from; each patch's, from the tree before it.
git -C "$tree" checkout -q --detach "$base"
i=0
built=()
build "pristine" x86_64 test
case "${built[0]}" in *FAILED*) echo "check-series: the pristine tree does not build (log: $logs/0-pristine.log)"; exit 1 ;; esac

for ((i = 1; i <= npatch; i++)); do
	c=${commits[$((i - 1))]}
	pf=${pfiles[$((i - 1))]}
	# The objects of the C files under mm/ that the patch changes and the
	# tree before it builds: their W=1 and sparse findings before.
	mapfile -t cfiles < <(g diff --name-only --diff-filter=AM "$c~1" "$c" -- 'mm/*.c' 'include/*.h' 'mm/*.h')
	mapfile -t before < <(mm_objs "${cfiles[@]}")
	: > "$logs/$i-w1.before" ; : > "$logs/$i-sparse.before"
	if [ ${#before[@]} -gt 0 ]; then
		findings w1 "${before[@]}" > "$logs/$i-w1.before"
		findings sparse "${before[@]}" > "$logs/$i-sparse.before"
	fi
	git -C "$tree" checkout -q --detach "$c" || { echo "check-series: cannot check out $c"; exit 1; }
	built=()
	kconfig_scan=no
	grep -q '^config THP_SCAN$' "$tree/mm/Kconfig" && kconfig_scan=yes
	build "x86_64" x86_64 test
	if [ $((i % 5)) = 0 ] || [ "$i" = "$npatch" ]; then
		if [ "$kconfig_scan" = yes ]; then
			build "x86_64 THP_SCAN=n" x86_64 test+nothpscan
		fi
		build "arm64" arm64 test
	fi
	# checkpatch on the patch as sent, with the exceptions check.sh makes
	# for the same files: the EM()/EMe() enum idiom of trace headers, and
	# the two diagnostic format strings of the tests' helpers kept whole.
	# UNKNOWN_COMMIT_ID: the pristine tree has no upstream history to
	# look a Fixes: hash up in (the hashes were checked against the
	# mailing-list archives).
	(cd "$tree" && scripts/checkpatch.pl --strict --show-types \
		--ignore UNKNOWN_COMMIT_ID "$pf" 2>/dev/null) | cp_filter > "$logs/$i-checkpatch.log"
	cp_tot=$(grep -c '^ERROR:' "$logs/$i-checkpatch.log")/$(grep -c '^WARNING:' "$logs/$i-checkpatch.log")/$(grep -c '^CHECK:' "$logs/$i-checkpatch.log")
	[ "$cp_tot" = 0/0/0 ] || bad=1
	# W=1 and sparse: the findings the patch adds on its objects;
	# kernel-doc on its C files and headers.
	mapfile -t objs < <(mm_objs "${cfiles[@]}")
	wn=0 sp=0 kd=0
	if [ ${#objs[@]} -gt 0 ]; then
		findings w1 "${objs[@]}" > "$logs/$i-w1.after"
		findings sparse "${objs[@]}" > "$logs/$i-sparse.after"
		comm -13 "$logs/$i-w1.before" "$logs/$i-w1.after" > "$logs/$i-w1.new"
		comm -13 "$logs/$i-sparse.before" "$logs/$i-sparse.after" > "$logs/$i-sparse.new"
		wn=$(grep -c . "$logs/$i-w1.new")
		sp=$(grep -c . "$logs/$i-sparse.new")
	fi
	klog=$logs/$i-kernel-doc.log
	: > "$klog"
	for f in "${cfiles[@]}"; do
		(cd "$tree" && scripts/kernel-doc -none "$f") >> "$klog" 2>&1
	done
	kd=$(grep -c -i 'warning' "$klog")
	[ "$wn$sp$kd" = 000 ] || bad=1
	subj=$(g log -1 --format=%s "$c" | cut -c1-60)
	rows+=("| $i | $subj | $(IFS=';'; echo "${built[*]}" | sed 's/;/, /g') | $cp_tot | $wn | $sp | $kd |")
done

# --- the last patch: coccicheck on the series' new C files, and the docs -
final_msgs=()
mapfile -t newc < <(g diff --name-only --diff-filter=A "$base" series -- 'mm/*.c')
clog=$logs/coccicheck.log
: > "$clog"
for f in "${newc[@]}"; do
	(cd "$tree" && make -s coccicheck MODE=report M="$(dirname "$f")" COCCI= SPFLAGS="--very-quiet" \
		2>/dev/null | grep -F "$f") >> "$clog" || true
done
nc=$(grep -c . "$clog")
[ "$nc" = 0 ] || bad=1
final_msgs+=("coccicheck on ${newc[*]}: $nc findings (log: $clog)")

# The docs: warnings of the series' tree that name a file it touches and
# that the pristine tree's build does not give.
docs() { # REV OBJ LOG
	git -C "$tree" checkout -q --detach "$1"
	make -C "$tree" O="$2" SPHINXDIRS="mm admin-guide" htmldocs > "$3" 2>&1
}
docs "$base" "$cb/docs-base" "$logs/docs-base.log"
drc=$?
docs series "$cb/docs-series" "$logs/docs-series.log"
drc2=$?
touched=$(g diff --name-only "$base" series -- Documentation | tr '\n' '|' | sed 's/|$//')
# Paths as the tree has them, whichever build folder sphinx names.
grep -iE 'warning|error' "$logs/docs-series.log" | sed "s|$tree/||; s|$cb/docs-series/||" | sort -u > "$cb/docs-series.w"
grep -iE 'warning|error' "$logs/docs-base.log" | sed "s|$tree/||; s|$cb/docs-base/||" | sort -u > "$cb/docs-base.w"
new_docs=$(comm -13 "$cb/docs-base.w" "$cb/docs-series.w" | grep -E "${touched:-^$}" || true)
# A partial build (SPHINXDIRS) cannot resolve an absolute reference that a
# full build resolves: "unknown document: '/admin-guide/mm/transhuge'"
# from the ABI files, which 6.12's own ABI file gives as well.  Such a
# warning is listed apart, and counts as new only if the document it names
# does not exist in the series' tree.
partial=
if [ -n "$new_docs" ]; then
	real=
	while IFS= read -r w; do
		d=$(sed -n "s/.*unknown document: '\/\([^']*\)'.*/\1/p" <<< "$w")
		if [ -n "$d" ] && [ -f "$tree/Documentation/$d.rst" ]; then
			partial+="$w"$'\n'
		else
			real+="$w"$'\n'
		fi
	done <<< "$new_docs"
	new_docs=${real%$'\n'}
fi
nd=$(echo -n "$new_docs" | grep -c . || true)
if [ -n "$partial" ]; then
	final_msgs+=("htmldocs (mm, admin-guide): $(echo -n "$partial" | grep -c .) references that only a partial build leaves unresolved (the documents exist):")
	final_msgs+=("${partial%$'\n'}")
fi
if [ "$drc" != 0 ] || [ "$drc2" != 0 ]; then
	final_msgs+=("htmldocs: make failed (base $drc, series $drc2; logs: $logs/docs-*.log)")
	bad=1
elif [ "$nd" != 0 ]; then
	final_msgs+=("htmldocs (mm, admin-guide): $nd new warnings in the series' files:")
	final_msgs+=("$new_docs")
	bad=1
else
	final_msgs+=("htmldocs (mm, admin-guide): no new warning in the series' files ($(wc -l < "$cb/docs-series.w") lines of warnings in all, $(wc -l < "$cb/docs-base.w") in the pristine tree)")
fi
git -C "$tree" checkout -q --detach series

echo
echo "| patch | subject | builds | checkpatch --strict (errors/warnings/checks) | new W=1 warnings | new sparse warnings | kernel-doc warnings |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${final_msgs[@]}"
echo "logs: $logs"
exit $bad
