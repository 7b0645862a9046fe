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
bad=0
say() { echo "check: $*"; }

cd "$top"
kfiles=$(find mm include -type f \( -name '*.c' -o -name '*.h' \) | sort)
for f in $kfiles tools/testing/selftests/mm/thp_scan_*.c; do
	out=$(perl "$tree/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
		--ignore SPDX_LICENSE_TAG -f "$f" 2>&1 | grep -E ': (ERROR|WARNING|CHECK):')
	if [ -n "$out" ]; then echo "$out"; bad=1; fi
done
for p in $(grep -v '^[[:space:]]*\(#\|$\)' patches/series); do
	# --no-signoff: the From/Signed-off-by lines are checked, not the sender.
	out=$(perl "$tree/scripts/checkpatch.pl" --strict --no-tree --terse \
		"$top/patches/$p" 2>&1 | grep -E ': (ERROR|WARNING|CHECK):')
	if [ -n "$out" ]; then echo "$p: $out"; bad=1; fi
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
	objs=$(find mm -name '*.c' | sed 's/\.c$/.o/' | sort)
	export CCACHE_DIR=${CCACHE_DIR:-/var/cache/thp-scan/ccache}
	out=$(make -C "$tree" O="$obj" ARCH=x86_64 C=2 $objs 2>&1)
	rc=$?
	echo "$out" | grep -q '^  CHECK ' || { out="sparse did not run"$'\n'"$out"; rc=1; }
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

# coccicheck's report mode, script by script (those that need OCaml, which
# Debian's coccinelle lacks, are skipped), on the new C files.
if command -v spatch >/dev/null; then
	cfiles=$(find mm -name '*.c' | sort)
	out=$(cd "$tree" && for c in $(find scripts/coccinelle -name '*.cocci' | sort); do
		grep -q 'script:ocaml' "$c" && continue
		grep -q 'virtual report' "$c" || continue
		spatch -D report --no-show-diff --very-quiet --cocci-file "$c" \
			--no-includes --include-headers -I arch/x86/include -I include \
			-I include/uapi -I arch/x86/include/uapi \
			--include include/linux/compiler-version.h \
			--include include/linux/kconfig.h $cfiles 2>&1
	done | grep -E "^($(echo $cfiles | tr ' ' '|')):" || true)
	if [ -n "$out" ]; then echo "$out"; bad=1; fi
	say "coccicheck (report) on $cfiles: $([ -z "$out" ] && echo clean || echo findings above)"
else
	say "coccicheck: spatch missing (workbench/install-deps.sh)"; bad=1
fi
exit $bad
