# Sourced by the scripts that run the kernel's make on an object folder
# (build-kernel.sh, check.sh): one definition of how, so that every make
# on build/obj/ARCH-CFG gives the same commands.  Kbuild rebuilds what
# was made with another command line: a make with HOSTCC=gcc where the
# build had "ccache gcc" rebuilds the host tools, objtool among them, and
# every object depends on objtool, so the next build compiles the whole
# kernel again (the sparse run of check.sh did that: 137 s of ccache hits
# after each make test).
#
#   kmake_setup ARCH    sets karch, cross, image, target and the ccache and
#                       reproducibility environment
#   kmake OBJ ARGS...   make -C $tree O=OBJ with the workbench's variables
# Needs $build and $tree.
kmake_setup() {
	case "$1" in
	x86_64)	karch=x86_64; cross=; image=arch/x86/boot/bzImage; target=bzImage ;;
	arm64)	karch=arm64; cross=aarch64-linux-gnu-; image=arch/arm64/boot/Image; target=Image ;;
	*)	echo "kmake: unknown ARCH $1 (x86_64, arm64)" >&2; return 1 ;;
	esac
	export CCACHE_DIR=${CCACHE_DIR:-/var/cache/thp-scan/ccache}
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	# Same compiler output whatever the folder or time: ccache hits across clones.
	export CCACHE_BASEDIR=$build CCACHE_NOHASHDIR=1
	export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026"
	export KBUILD_BUILD_USER=thp_scan KBUILD_BUILD_HOST=workbench
	mkdir -p "$CCACHE_DIR"
}
kmake() {
	local obj=$1
	shift
	make -C "$tree" O="$obj" ARCH="$karch" CROSS_COMPILE="$cross" \
		CC="ccache ${cross}gcc" HOSTCC="ccache gcc" "$@"
}
