#!/bin/bash
# The main job: build the patched x86_64 kernel and boot it in QEMU,
# showing the thp_scan knobs and a THP workload in the guest.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/workbench/tree.sh"
"$top/workbench/build-kernel.sh" x86_64 test
"$top/workbench/build-tests.sh" x86_64
# Debian's trace-cmd in the guest (workbench/install-deps.sh fetched it).
exec "$top/qemu/boot.sh" --arch x86_64 --cfg test --name demo --tests none \
	--root-files "${BB_ARM64_DIR:-/var/cache/thp-scan}/trace-cmd-x86_64" \
	--cmd "$(cat "$top/workbench/demo-guest.sh")" "$@"
