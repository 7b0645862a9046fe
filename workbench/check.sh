#!/bin/bash
# Static checks of what this repository adds to the kernel:
#   checkpatch.pl --strict on every new kernel file and every patch,
#   kernel-doc -none on the new C files and headers,
#   sparse (make C=2) on the new objects of the x86_64 test build.
# Prints each finding; exits 1 if there is any.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
tree=$build/linux
obj=$build/obj/x86_64-test
# The build's own make: any other command line would make the next build
# recompile the kernel (see kmake.sh).
. "$top/workbench/kmake.sh"
kmake_setup x86_64
bad=0
t_last=$(date +%s)
# say RESULT: one "check: WHAT: clean|findings above" line (test.sh counts
# them), and how long that check took, on a line of its own.
say() {
	local now
	now=$(date +%s)
	echo "check: $*"
	echo "time: $((now - t_last)) s"
	t_last=$now
}

# cached FILE... -- COMMAND...: COMMAND's output and exit status, from
# build/check-cache when COMMAND ran before on the same FILEs (their
# content, with the command line itself and the tools' versions, is the
# key).  The checks below read nothing but those files, so an unchanged
# file gives the same findings: only what changed is checked again.
cache=$build/check-cache
mkdir -p "$cache"
tools_id=$( (perl -v | sed -n 2p; spatch --version 2>/dev/null | head -n 1) | sha1sum | cut -c1-40)
cached() {
	local files=() key rc
	while [ "$1" != -- ]; do files+=("$1"); shift; done
	shift
	key=$( (echo "$tools_id $*"; cat "${files[@]}") | sha1sum | cut -c1-40)
	if [ -f "$cache/$key.rc" ]; then
		cat "$cache/$key.out"
		return "$(cat "$cache/$key.rc")"
	fi
	"$@" > "$cache/$key.out.tmp" 2>&1
	rc=$?
	mv "$cache/$key.out.tmp" "$cache/$key.out"
	echo $rc > "$cache/$key.rc"
	cat "$cache/$key.out"
	return $rc
}
# checkpatch reads its own data files and, run in a git checkout, seeds
# its CamelCase list from the checkout's include/ headers.
cp_inputs=("$tree/scripts/checkpatch.pl" "$tree/scripts/spelling.txt"
	"$tree/scripts/const_structs.checkpatch" $(cd "$top" && find include -name '*.h' | sort))

cd "$top"
kfiles=$(find mm include -type f \( -name '*.c' -o -name '*.h' \) | sort)
for f in $kfiles tools/testing/selftests/mm/thp_*.[ch]; do
	ignore=SPDX_LICENSE_TAG
	# The EM()/EMe() enum table of trace headers (include/trace/events/
	# huge_memory.h and others) is the documented idiom; checkpatch
	# misreads it as ordinary macros.
	case "$f" in
	include/trace/events/*)
		ignore=$ignore,COMPLEX_MACRO,CAMELCASE,MACRO_ARG_UNUSED,TRAILING_SEMICOLON ;;
	# Two diagnostic format strings of the tests' helpers, longer than
	# 100 columns, stay whole so that their output can be grepped for.
	tools/testing/selftests/mm/thp_scan_util.c)
		ignore=$ignore,LONG_LINE_STRING ;;
	esac
	out=$(cached "$f" "${cp_inputs[@]}" -- perl "$tree/scripts/checkpatch.pl" --strict \
		--no-tree --terse --show-types --ignore "$ignore" -f "$f" | grep -E ': (ERROR|WARNING|CHECK):')
	if [ -n "$out" ]; then echo "$out"; bad=1; fi
done
for p in $(grep -v '^[[:space:]]*\(#\|$\)' patches/series); do
	# --no-signoff: the From/Signed-off-by lines are checked, not the sender.
	# UNKNOWN_COMMIT_ID: checkpatch looks a Fixes: hash up in the git
	# repository it runs in, and neither this one nor the unpacked tree
	# has the kernel's history (the hashes were checked against the
	# mailing-list archives); a malformed Fixes: line is still flagged.
	out=$(cached "$top/patches/$p" "${cp_inputs[@]}" -- perl "$tree/scripts/checkpatch.pl" \
		--strict --no-tree --terse --ignore UNKNOWN_COMMIT_ID "$top/patches/$p" |
		grep -E ': (ERROR|WARNING|CHECK):')
	if [ -n "$out" ]; then echo "$p: $out"; bad=1; fi
done
# Every boot parameter the new files define (__setup, early_param) is in
# kernel-parameters.txt.
for name in $(cat $kfiles | sed -n -e 's/.*__setup("\([^"]*\)".*/\1/p' \
	-e 's/.*early_param("\([^"]*\)".*/\1=/p'); do
	if ! grep -q "^[[:space:]]*$name[[:space:]]" "$tree/Documentation/admin-guide/kernel-parameters.txt"; then
		echo "$name: a boot parameter without an entry in Documentation/admin-guide/kernel-parameters.txt"
		bad=1
	fi
done
say "checkpatch --strict: $([ $bad = 0 ] && echo clean || echo findings above)"

kd=0
for f in $kfiles; do
	out=$(perl "$tree/scripts/kernel-doc" -none -Wall "$f" 2>&1)
	if [ -n "$out" ]; then echo "$out"; kd=1; fi
done
say "kernel-doc -none: $([ $kd = 0 ] && echo clean || echo findings above)"
[ $kd = 0 ] || bad=1

if [ -f "$obj/.config" ]; then
	objs=$(find mm -name '*.c' | sed 's/\.c$/.o/' | sort | tr '\n' ' ')
	out=$(kmake "$obj" C=2 $objs 2>&1)
	rc=$?
	grep -q '^  CHECK ' <<< "$out" || { out="sparse did not run"$'\n'"$out"; rc=1; }
	if [ $rc != 0 ]; then
		out=$(echo "$out" | tail -n 20)
	else
		out=$(echo "$out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error)|did not run' || true)
	fi
	if [ -n "$out" ]; then echo "$out"; bad=1; fi
	say "sparse on $objs: $([ -z "$out" ] && echo clean || echo findings above)"
else
	say "sparse: no x86_64-test build yet (make kernel)"; bad=1
fi

# sparse on the upstream C files the patches change: only warnings that
# the pristine file does not have count (6.12 has its own, e.g. context
# imbalances in huge_memory.c).
if [ -f "$obj/.config" ]; then
	pfiles=$(cd "$tree" && QUILTRC="$top/workbench/quiltrc" quilt files -a 2>/dev/null |
		grep '\.c$' | sort -u)
	sp=0 checked= pobjs=()
	for f in $pfiles; do
		o=${f%.c}.o
		[ -f "$obj/$(dirname "$o")/.$(basename "$o").cmd" ] && pobjs+=("$o")
	done
	# One make runs sparse on all of them (V=1: each command, then its
	# findings); the pristine file of each is checked with the same command.
	mlog=$(mktemp)
	kmake "$obj" C=2 V=1 "${pobjs[@]}" > "$mlog" 2>&1
	# The pristine files are checked against pristine headers: a patched
	# header (a field moved, say) makes a pristine file fail to compile,
	# and sparse does not check the locking of a function with errors,
	# so its own findings would look new.  pdir holds the pristine
	# version of every header the patches change (include/ first on the
	# command line; mm/*.h beside the pristine .c file).
	pdir=$(mktemp -d)
	mkdir -p "$pdir/include" "$pdir/mm"
	cp "$tree"/mm/*.h "$pdir/mm/"
	for h in $(cd "$tree" && QUILTRC="$top/workbench/quiltrc" quilt files -a 2>/dev/null |
		   grep -E '^(include|mm)/.*\.h$' | sort -u); do
		for p in $(cd "$tree" && QUILTRC="$top/workbench/quiltrc" quilt applied 2>/dev/null); do
			if [ -e "$tree/.pc/$p/$h" ]; then
				case "$h" in
				include/*) d=$pdir/include/${h#include/} ;;
				*) d=$pdir/$h ;;
				esac
				mkdir -p "$(dirname "$d")"
				# quilt keeps an empty file for a file a patch adds.
				if [ -s "$tree/.pc/$p/$h" ]; then cp "$tree/.pc/$p/$h" "$d"; else rm -f "$d"; fi
				break
			fi
		done
	done
	norm() { sed -n 's/^[^ ]*:[0-9]*:[0-9]*: \(warning\|error\)/\1/p' | sort; }
	for o in "${pobjs[@]}"; do
		f=${o%.o}.c
		cmd=$(grep "^  sparse .* $tree/$f\$" "$mlog" | tail -n 1)
		[ -n "$cmd" ] || { echo "sparse did not run on $f"; sp=1; continue; }
		base=""
		for p in $(cd "$tree" && QUILTRC="$top/workbench/quiltrc" quilt applied 2>/dev/null); do
			if [ -f "$tree/.pc/$p/$f" ]; then base=$tree/.pc/$p/$f; break; fi
		done
		[ -n "$base" ] || continue
		# The findings make printed after this file's command, up to the
		# next command.
		new=$(awk -v c="$cmd" '$0 == c { on = 1; next } /^  sparse / { on = 0 } on' "$mlog" | norm)
		mkdir -p "$pdir/$(dirname "$f")"
		copy=$pdir/$f
		cp "$base" "$copy"
		old=$(cd "$obj" && eval "$(echo "${cmd/-Wp,-MMD,*.d /}" |
			sed "s| -nostdinc | -nostdinc -I$pdir/include |; s|$tree/$f|$copy|")" 2>&1 | norm)
		# Errors only the pristine file has: the baseline is broken.
		perr=$(comm -23 <(grep '^error' <<< "$old" || true) <(grep '^error' <<< "$new" || true))
		if [ -n "$perr" ]; then
			echo "$f: the pristine file has errors of its own against the pristine headers:"
			echo "$perr" | head -n 5
			sp=1
		fi
		rm -f "$copy"
		added=$(comm -13 <(echo "$old") <(echo "$new"))
		if [ -n "$added" ]; then echo "$f: new sparse findings:"; echo "$added"; sp=1; fi
		checked="$checked $f"
	done
	rm -rf "$mlog" "$pdir"
	say "sparse on the patched files ($checked ): $([ $sp = 0 ] && echo clean || echo findings above)"
	[ $sp = 0 ] || bad=1
fi

# coccicheck's report mode, script by script (those that need OCaml, which
# Debian's coccinelle lacks, are skipped), on the new C files.
if command -v spatch >/dev/null; then
	cfiles=$(find mm -name '*.c' | sort | tr '\n' ' ')
	out=$(cd "$tree" && for c in $(find scripts/coccinelle -name '*.cocci' | sort); do
		grep -q 'script:ocaml' "$c" && continue
		grep -q 'virtual report' "$c" || continue
		cached "$c" $cfiles include/linux/compiler-version.h include/linux/kconfig.h -- \
			spatch -D report --no-show-diff --very-quiet --cocci-file "$c" \
			--no-includes --include-headers -I arch/x86/include -I include \
			-I include/uapi -I arch/x86/include/uapi \
			--include include/linux/compiler-version.h \
			--include include/linux/kconfig.h $cfiles
	done | grep -E "^($(echo $cfiles | tr ' ' '|')):" || true)
	if [ -n "$out" ]; then echo "$out"; bad=1; fi
	say "coccicheck (report) on $cfiles: $([ -z "$out" ] && echo clean || echo findings above)"
else
	say "coccicheck: spatch missing (workbench/install-deps.sh)"; bad=1
fi
exit $bad
