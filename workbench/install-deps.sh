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
	# libnuma.a for the upstream ksm_tests and migration (static guests)
	libnuma-dev
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

# deb_x DEBARCH PKG DIR: Debian's package PKG of architecture DEBARCH
# (amd64, arm64), fetched with apt-get download and unpacked into DIR,
# not installed (the arm64 packages below cannot be co-installed with
# their amd64 ones).
deb_x() {
	export DEBIAN_FRONTEND=noninteractive
	if [ "$1" != "$(dpkg --print-architecture)" ] &&
	   ! dpkg --print-foreign-architectures | grep -qx "$1"; then
		dpkg --add-architecture "$1"
		apt-get update -qq
	fi
	local tmp
	tmp=$(mktemp -d)
	chmod 755 "$tmp"; chown _apt "$tmp" 2>/dev/null || true
	# A package list without that architecture yet: once more after an update.
	if ! (cd "$tmp" && apt-get download -qq "$2:$1" >/dev/null 2>&1); then
		apt-get update -qq
		(cd "$tmp" && apt-get download -qq "$2:$1" >/dev/null)
	fi
	dpkg-deb -x "$tmp/$2"_*_"$1".deb "$3"
	rm -rf "$tmp"
}
arm64_deb() { deb_x arm64 "$@"; }

# arm64 busybox-static for the arm64 initramfs: Debian's own binary.
BB_ARM64=${BB_ARM64_DIR:-/var/cache/thp-scan}/busybox-arm64
if [ ! -x "$BB_ARM64" ]; then
	echo "install-deps: fetching busybox-static:arm64"
	x=$(mktemp -d)
	arm64_deb busybox-static "$x"
	mkdir -p "$(dirname "$BB_ARM64")"
	install -m 0755 "$x/bin/busybox" "$BB_ARM64"
	rm -rf "$x"
fi

# arm64 libnuma.a (the upstream ksm_tests and migration): its static
# library and headers from libnuma-dev:arm64.
NUMA_ARM64=${BB_ARM64_DIR:-/var/cache/thp-scan}/libnuma-arm64
if [ ! -f "$NUMA_ARM64/lib/libnuma.a" ]; then
	echo "install-deps: fetching libnuma-dev:arm64"
	x=$(mktemp -d)
	arm64_deb libnuma-dev "$x"
	mkdir -p "$NUMA_ARM64/lib" "$NUMA_ARM64/include"
	install -m 0644 "$x"/usr/lib/aarch64-linux-gnu/libnuma.a "$NUMA_ARM64/lib/"
	install -m 0644 "$x"/usr/include/numa*.h "$NUMA_ARM64/include/"
	rm -rf "$x"
fi

# root_files DEBARCH DIR "PKG..." PATH...: the files PATH... (paths below
# /) of Debian's packages PKG... of DEBARCH, fetched with deb_x, at the
# same paths below DIR (qemu/boot.sh --root-files DIR puts them there in
# a guest).  A link is followed inside the packages to the file it names:
# an absolute link (amd64's /lib64 loader) would name the host's.
root_files() {
	local deb=$1 dir=$2 pkgs=$3 x p f src l
	shift 3
	x=$(mktemp -d)
	for p in $pkgs; do
		deb_x "$deb" "$p" "$x"
	done
	rm -rf "$dir.new"
	for f in "$@"; do
		src=$x/$f
		while [ -L "$src" ]; do
			l=$(readlink "$src")
			case "$l" in
			/*) src=$x$l ;;
			*) src=$(dirname "$src")/$l ;;
			esac
		done
		mkdir -p "$dir.new/$(dirname "$f")"
		cp "$src" "$dir.new/$f"
	done
	rm -rf "$x" "$dir"
	mv "$dir.new" "$dir"
}

# Debian's trace-cmd for the guests (the trace_cmd test and the demo):
# the program, the three libraries it needs and the C library with its
# loader, in /var/cache/thp-scan/trace-cmd-ARCH/.
for a in x86_64 arm64; do
	TC=${BB_ARM64_DIR:-/var/cache/thp-scan}/trace-cmd-$a
	[ -x "$TC/usr/bin/trace-cmd" ] && continue
	echo "install-deps: fetching trace-cmd and its libraries for $a"
	t=$([ "$a" = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu)
	ld=$([ "$a" = arm64 ] && echo lib/ld-linux-aarch64.so.1 || echo lib64/ld-linux-x86-64.so.2)
	root_files "$([ "$a" = arm64 ] && echo arm64 || echo amd64)" "$TC" \
		"trace-cmd libtracefs1 libtraceevent1 libzstd1 libc6" \
		usr/bin/trace-cmd "$ld" "lib/$t/libc.so.6" "usr/lib/$t/libtracefs.so.1" \
		"usr/lib/$t/libtraceevent.so.1" "usr/lib/$t/libzstd.so.1"
done

# Debian's arm64 redis for the benchmark's arm64 boots (bench/run.sh
# --arm64; the x86_64 boots take the host's): redis-server (redis-tools'
# redis-check-rdb, which runs as the server under that name) and
# redis-benchmark with the libraries they need, in
# /var/cache/thp-scan/redis-arm64/.
RD=${BB_ARM64_DIR:-/var/cache/thp-scan}/redis-arm64
if [ ! -x "$RD/usr/bin/redis-server" ]; then
	echo "install-deps: fetching redis and its libraries for arm64"
	t=aarch64-linux-gnu
	root_files arm64 "$RD" "redis-tools libatomic1 libjemalloc2 liblzf1 libssl3 \
		libsystemd0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1 \
		libstdc++6 libgcc-s1 libc6" \
		usr/bin/redis-check-rdb usr/bin/redis-benchmark lib/ld-linux-aarch64.so.1 \
		"lib/$t/libc.so.6" "lib/$t/libm.so.6" "lib/$t/libcap.so.2" "lib/$t/libgcc_s.so.1" \
		"lib/$t/libgpg-error.so.0" "lib/$t/liblzma.so.5" \
		"usr/lib/$t/libatomic.so.1" "usr/lib/$t/libjemalloc.so.2" "usr/lib/$t/liblzf.so.1" \
		"usr/lib/$t/libssl.so.3" "usr/lib/$t/libcrypto.so.3" "usr/lib/$t/libsystemd.so.0" \
		"usr/lib/$t/libgcrypt.so.20" "usr/lib/$t/liblz4.so.1" "usr/lib/$t/libzstd.so.1" \
		"usr/lib/$t/libstdc++.so.6"
	mv "$RD/usr/bin/redis-check-rdb" "$RD/usr/bin/redis-server"
fi
