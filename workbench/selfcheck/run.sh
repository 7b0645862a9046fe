#!/bin/bash
# The workbench's check of qemu/results.py on the fixtures of this folder
# (see README): results.py runs on each FOLDER/ that has an "expect" file,
# and must say what that file says:
#   exit N            its exit status
#   counts LINE       its closing counts, "P passed, F failed, S skipped"
#   fail TEXT         a line "NAME: FAIL TEXT..." (TEXT is its start)
#   line TEXT         a line of its output that starts with TEXT
#   args ARGS...      more arguments for results.py (e.g. --expect-cmd)
# Prints one line per fixture, "selfcheck: ok: ..." or "selfcheck: FAIL:
# ..." (then results.py's output), and exits 1 if any fixture failed.
#   workbench/selfcheck/run.sh [FOLDER...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$top/build}
tree=${TREE:-$build/linux}
bad=0
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=($(cd "$here" && for d in */expect; do echo "${d%/expect}"; done))
for folder in "${folders[@]}"; do
	dir=$here/$folder
	name=selfcheck-$folder
	[ "$folder" = base ] && name=selfcheck
	args=(--name "$name" --tree "$tree" --expected "$dir/expected-tests" --expect-tests all)
	[ -f "$dir/skips.allow" ] && args+=(--allow "$dir/skips.allow")
	want_rc= counts= wants=()
	while IFS= read -r l; do
		case "$l" in
		'#'*|'') ;;
		'exit '*) want_rc=${l#exit } ;;
		'counts '*) counts=${l#counts } ;;
		'fail '*) wants+=("$name: FAIL ${l#fail }") ;;
		'line '*) wants+=("${l#line }") ;;
		'args '*) read -ra extra <<< "${l#args }"; args+=("${extra[@]}") ;;
		*) echo "selfcheck: $folder/expect: bad line: $l"; bad=1 ;;
		esac
	done < "$dir/expect"
	out=$(python3 "${RESULTS_PY:-$top/qemu/results.py}" "${args[@]}" "$dir" 2>&1)
	rc=$?
	why=()
	[ "$rc" = "$want_rc" ] || why+=("exit status $rc, not $want_rc")
	# Here-strings, not "echo | grep -q": under pipefail, grep -q leaving
	# early can fail the echo with SIGPIPE, now and then.
	grep -qxF "$name: $counts (0 s)" <<< "$out" || why+=("not: $counts")
	for w in "${wants[@]}"; do
		grep -qF -- "$w" <<< "$out" || why+=("no line: $w")
	done
	if [ ${#why[@]} = 0 ]; then
		echo "selfcheck: ok: results.py on the $folder fixture: $counts, exit $want_rc"
	else
		echo "selfcheck: FAIL: results.py on the $folder fixture: $counts, exit $want_rc"
		printf '  %s\n' "${why[@]}"
		echo "$out" | sed 's/^/  | /'
		bad=1
	fi
done
exit $bad
