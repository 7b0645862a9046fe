#!/bin/bash
# Install everything the workbench needs on a Debian 12 machine (run as root).
# Idempotent: does nothing when every package is already present.
set -euo pipefail

PKGS=(
	# kernel build
	build-essential bc bison flex libelf-dev libssl-dev cpio
	python3 xz-utils quilt ccache perl rsync
	# arm64 cross build and static guest programs
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	# guests
	qemu-system-x86 qemu-system-arm busybox-static
	# static checks
	sparse coccinelle
	# the kernel source
	linux-source-6.12
	# the benchmark (make bench): Debian's redis 7 for the guest (copied
	# into its initramfs with its libraries) and gnuplot for the plots
	redis-server redis-tools gnuplot-nox
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# arm64 busybox-static for the arm64 initramfs: Debian's own binary, fetched
# with apt-get download (the package cannot be co-installed with the amd64 one).
BB_ARM64=${BB_ARM64_DIR:-/var/cache/thp-scan}/busybox-arm64
if [ ! -x "$BB_ARM64" ]; then
	echo "install-deps: fetching busybox-static:arm64"
	export DEBIAN_FRONTEND=noninteractive
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
	fi
	apt-get update -qq
	tmp=$(mktemp -d)
	chmod 755 "$tmp"; chown _apt "$tmp" 2>/dev/null || true; (cd "$tmp" && apt-get download -qq busybox-static:arm64 >/dev/null)
	dpkg-deb -x "$tmp"/busybox-static_*_arm64.deb "$tmp/x"
	mkdir -p "$(dirname "$BB_ARM64")"
	install -m 0755 "$tmp/x/bin/busybox" "$BB_ARM64"
	rm -rf "$tmp"
fi
