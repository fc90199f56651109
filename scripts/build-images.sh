#!/usr/bin/env bash
# Build the rv32vm guest images reproducibly from Debian packages (and zig from PyPI) into images/:
#   images/Image               Linux 6.12 RV32 kernel (raw Image), config: images/linux.config
#   images/initramfs.cpio.gz   busybox initramfs (/init, /sbin/vm-exit, /bin/cksum-test)
#   images/rootfs.ext2         the same userland as an ext2 root filesystem (busybox init)
#   images/fw_dynamic.bin      OpenSBI 1.6 generic fw_dynamic for rv32
#   images/manifest.txt        sha256, sizes, input package versions and build commands
# Details and how to boot them: docs/images.md.
#
# Usage: scripts/build-images.sh [--build-dir DIR] [--jobs N] [--clean] [--no-apt] [STEP...]
#   Steps (default: all but check, in this order):
#     deps       apt-get update + install the build tools, pip install ziglang (needs root)
#     kernel     allnoconfig + images/linux.config, verified, then `make Image`
#     busybox    static riscv32-linux-musl busybox (zig cc) with images/busybox.config
#     cksum      /bin/cksum-test from images/src/cksum-test.c (+ a host build for the expected output)
#     initramfs  images/initramfs.cpio.gz (newc, sorted, fixed owners and mtimes)
#     rootfs     images/rootfs.ext2 (mke2fs -d with fixed UUID, hash seed and time; needs root)
#     opensbi    images/fw_dynamic.bin from Debian's opensbi_1.6.orig.tar.gz (trixie source)
#     manifest   images/manifest.txt
#     check      boot the images under qemu-system-riscv32 and check them (images/tools/boot-test.py)
#   --build-dir  where sources and build trees go (default /work/build-images; never the repo)
#   --clean      delete the build directory first (a build from scratch)
#   --no-apt     skip the deps step even when it is requested or implied
#
# Runs non-interactively; meant for a Debian bookworm machine as root. Idempotent: a re-run
# rebuilds incrementally and rewrites the artifacts; with unchanged inputs they are bit-identical.
# Everything time-dependent is pinned to SOURCE_DATE_EPOCH below.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
images="$repo/images"
build="/work/build-images"
jobs="$(nproc)"
clean=0
no_apt=0
steps=()

# Pinned inputs. Changing any of them changes the artifacts.
readonly EPOCH=1735689600 # 2025-01-01T00:00:00Z: every timestamp in every artifact
readonly ZIG_PYPI_VERSION=0.17.1
readonly OPENSBI_VERSION=1.6
readonly OPENSBI_DEBIAN_VERSION=1.6-1
readonly OPENSBI_ORIG_SHA256=d11702103f177a2914e94eec57ce5ed820296d874f6b6525c4482e55d71a3667
readonly ROOTFS_SIZE=8M
readonly ROOTFS_UUID=72763332-766d-4a00-8000-726f6f746673
readonly ROOTFS_HASH_SEED=72763332-766d-4a00-8000-686173687365
readonly KERNEL_TRIPLET=riscv64-linux-gnu-
readonly ALL_STEPS=(deps kernel busybox cksum initramfs rootfs opensbi manifest)

log() { echo "build-images.sh: $*" >&2; }
die() {
    log "ERROR: $*"
    exit 1
}
usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
    exit "${1:-0}"
}

while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) build="${2:?--build-dir needs a directory}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    --clean) clean=1; shift ;;
    --no-apt) no_apt=1; shift ;;
    -h | --help) usage 0 ;;
    -*) log "unknown option $1"; usage 2 ;;
    *) steps+=("$1"); shift ;;
    esac
done
[ ${#steps[@]} -gt 0 ] || steps=("${ALL_STEPS[@]}")
for step in "${steps[@]}"; do
    case " ${ALL_STEPS[*]} check " in *" $step "*) ;; *) die "unknown step '$step'" ;; esac
done
case "$(realpath -m "$build")/" in "$repo"/*) die "the build directory must be outside the repository" ;; esac

# The kernel prints KBUILD_BUILD_TIMESTAMP as it is (uname -v): give it in date(1)'s format.
KBUILD_BUILD_TIMESTAMP="$(LC_ALL=C date -u -d "@$EPOCH")"
export SOURCE_DATE_EPOCH=$EPOCH KBUILD_BUILD_TIMESTAMP KBUILD_BUILD_USER=rv32vm
export KBUILD_BUILD_HOST=rv32vm KBUILD_BUILD_VERSION=1 TZ=UTC LC_ALL=C DEBIAN_FRONTEND=noninteractive
export ZIG_GLOBAL_CACHE_DIR="$build/zig-cache" ZIG_LOCAL_CACHE_DIR="$build/zig-cache"
umask 022

if [ $clean = 1 ]; then
    log "removing $build"
    rm -rf "$build"
fi
mkdir -p "$build/times" "$images"

is_root() { [ "$(id -u)" = 0 ]; }
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "(not installed)"; }

# Check that every line of a kconfig fragment survived in the final .config:
# `CONFIG_X=v` must be present verbatim, `# CONFIG_X is not set` means X must not be set.
verify_fragment() {
    local config="$1" fragment="$2" line key lost=0
    while IFS= read -r line; do
        case "$line" in
        CONFIG_*=*)
            grep -qxF "$line" "$config" || {
                log "config lost: $line (now: $(grep -E "^(# )?${line%%=*}[= ]" "$config" || echo unset))"
                lost=1
            }
            ;;
        "# CONFIG_"*" is not set")
            key="${line#\# }"
            key="${key%% *}"
            if grep -q "^$key=" "$config"; then
                log "config lost: $line (now: $(grep "^$key=" "$config"))"
                lost=1
            fi
            ;;
        esac
    done <"$fragment"
    [ $lost = 0 ] || die "some lines of ${fragment#"$repo"/} did not survive in $config (see above)"
}

# Run `yes "" | make ... oldconfig` (busybox): yes dies of SIGPIPE, so only make's status counts.
yes_oldconfig() {
    local status
    set +o pipefail
    yes "" | "$@" oldconfig
    status=${PIPESTATUS[1]}
    set -o pipefail
    return "$status"
}

# --- deps ------------------------------------------------------------------------------------------
add_debsrc_entry() {
    grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ &&
        return 0
    log "adding a deb-src entry: /etc/apt/sources.list.d/debsrc.sources"
    cat >/etc/apt/sources.list.d/debsrc.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}

step_deps() {
    is_root || die "the deps step needs root (apt-get); run as root or pass --no-apt"
    add_debsrc_entry
    apt-get update -q
    apt-get install -y -q --no-install-recommends \
        linux-source-6.12 gcc-riscv64-linux-gnu binutils-riscv64-linux-gnu make gcc libc6-dev \
        bc bison flex cpio e2fsprogs python3 python3-pip dpkg-dev xz-utils gzip lz4 \
        ca-certificates debian-archive-keyring qemu-system-misc qemu-system-data
    local have
    have="$(python3 -m pip show ziglang 2>/dev/null | sed -n 's/^Version: //p')"
    if [ -z "$have" ]; then
        python3 -m pip install -q "ziglang==$ZIG_PYPI_VERSION" ||
            python3 -m pip install -q --break-system-packages "ziglang==$ZIG_PYPI_VERSION"
    elif [ "$have" != "$ZIG_PYPI_VERSION" ]; then
        log "WARNING: ziglang $have is installed, the pinned version is $ZIG_PYPI_VERSION:" \
            "busybox and cksum-test will not be bit-identical to the committed ones"
    fi
}

# --- kernel ----------------------------------------------------------------------------------------
step_kernel() {
    local tarball=/usr/src/linux-source-6.12.tar.xz version src out
    [ -f "$tarball" ] || die "$tarball is missing (apt-get install linux-source-6.12)"
    version="$(pkg_version linux-source-6.12)"
    src="$build/linux-source-6.12"
    out="$build/linux-build"
    if [ "$(cat "$src/.rv32vm-package-version" 2>/dev/null)" != "$version" ]; then
        log "kernel: unpacking $tarball ($version)"
        rm -rf "$src" "$out"
        tar -C "$build" -xf "$tarball"
        echo "$version" >"$src/.rv32vm-package-version"
    fi
    mkdir -p "$out"
    local kmake=(make -C "$src" O="$out" ARCH=riscv CROSS_COMPILE="$KERNEL_TRIPLET")
    log "kernel: configuring (allnoconfig + images/linux.config)"
    "${kmake[@]}" -s allnoconfig
    "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$images/linux.config" \
        >"$out/merge.log" 2>&1 || die "merge_config.sh failed, see $out/merge.log"
    "${kmake[@]}" -s olddefconfig
    verify_fragment "$out/.config" "$images/linux.config"
    log "kernel: building Image with -j$jobs (log: $out/build.log)"
    if ! nice -n 10 "${kmake[@]}" -j"$jobs" Image >"$out/build.log" 2>&1; then
        tail -n 30 "$out/build.log" >&2
        die "kernel build failed, see $out/build.log"
    fi
    install -m 0644 "$out/arch/riscv/boot/Image" "$images/Image"
    # The resolved configuration, minus the lines that only describe the build host's compilers.
    grep -vE '^CONFIG_(CC_VERSION_TEXT|GCC_VERSION|AS_VERSION|LD_VERSION|RUSTC_|PAHOLE_VERSION|CLANG_VERSION|LLD_VERSION)' \
        "$out/.config" >"$images/linux-full.config"
    log "kernel: images/Image ($(stat -c %s "$images/Image") bytes)"
}

# --- busybox ---------------------------------------------------------------------------------------
busybox_source_dir() {
    [ -d "$build/busybox-src" ] || return 0
    find "$build/busybox-src" -mindepth 1 -maxdepth 1 -type d -name 'busybox-*' | sort | tail -n1
}

write_zig_wrappers() {
    local tools="$build/zig-tools" t
    mkdir -p "$tools"
    cat >"$tools/riscv32-zig-cc" <<'WRAP'
#!/usr/bin/env bash
# zig cc for riscv32-linux-musl (rv32gc, ilp32d), minus the GNU-ld options zig's linker rejects
# (also inside -Wl,a,b lists; -Map and --sort-section take a separate value, dropped with them).
args=()
for a in "$@"; do
    case "$a" in
    -Wl,*)
        IFS=',' read -r -a parts <<<"${a#-Wl,}"
        kept=()
        i=0
        while [ $i -lt ${#parts[@]} ]; do
            p="${parts[$i]}"
            case "$p" in
            --sort-section | -Map) i=$((i + 1)) ;;
            --warn-common | --sort-common | --sort-section=* | -Map=* | --verbose) ;;
            *) kept+=("$p") ;;
            esac
            i=$((i + 1))
        done
        if [ ${#kept[@]} -gt 0 ]; then
            args+=("-Wl,$(IFS=','; echo "${kept[*]}")")
        fi
        ;;
    *) args+=("$a") ;;
    esac
done
exec python3 -m ziglang cc -target riscv32-linux-musl "${args[@]}"
WRAP
    chmod 0755 "$tools/riscv32-zig-cc"
    ln -sf riscv32-zig-cc "$tools/riscv32-zig-gcc"
    for t in ar ranlib objcopy; do
        printf '#!/bin/sh\nexec python3 -m ziglang %s "$@"\n' "$t" >"$tools/riscv32-zig-$t"
        chmod 0755 "$tools/riscv32-zig-$t"
    done
    # Binutils understand rv32 ELF; zig has no strip/nm/objdump of its own.
    for t in strip nm objdump; do ln -sf "$(command -v "$KERNEL_TRIPLET$t")" "$tools/riscv32-zig-$t"; done
}

step_busybox() {
    python3 -m ziglang version >/dev/null 2>&1 || die "zig is missing: pip install ziglang"
    local src out config line key
    src="$(busybox_source_dir)"
    if [ -z "$src" ]; then
        is_root || die "fetching the busybox source needs root (apt-get source)"
        add_debsrc_entry
        [ -n "$(apt-cache showsrc busybox 2>/dev/null)" ] || apt-get update -q
        mkdir -p "$build/busybox-src"
        (cd "$build/busybox-src" && apt-get source -q busybox) >"$build/busybox-src.log" 2>&1 ||
            die "apt-get source busybox failed, see $build/busybox-src.log"
        src="$(busybox_source_dir)"
        [ -n "$src" ] || die "apt-get source busybox produced no busybox-* directory"
    fi
    log "busybox: source ${src#"$build"/}"
    # zig cc is clang, which treats `extern T *const ptr_to_globals` as never changing and hoists
    # loads above the one store that sets it (awk and every INIT_G applet then crash). Busybox's
    # escape hatch is -DBB_GLOBAL_CONST='' (below); 1.35 spells this one declaration with a literal
    # const, so make it use the macro as later busybox releases do.
    local libbb_h="$src/include/libbb.h"
    sed -i 's/^extern struct globals \*const ptr_to_globals;/extern struct globals *BB_GLOBAL_CONST ptr_to_globals;/' "$libbb_h"
    grep -q '^extern struct globals \*BB_GLOBAL_CONST ptr_to_globals;' "$libbb_h" ||
        die "cannot apply the ptr_to_globals clang fix to $libbb_h"
    # riscv32 has only 64-bit-time syscalls: musl defines no SYS_settimeofday there and hwclock
    # does not compile. Without the syscall, leave the kernel's timezone alone (busybox 1.36+ has
    # the same guard).
    local hwclock_c="$src/util-linux/hwclock.c"
    if ! grep -q 'rv32vm: no settimeofday syscall' "$hwclock_c"; then
        awk '$0 == "\tint ret = syscall(SYS_settimeofday, NULL, tz);" && !done {
                print "#if defined(SYS_settimeofday)"; print
                print "#else"
                print "\t/* rv32vm: no settimeofday syscall (64-bit time only): keep the kernel timezone */"
                print "\tint ret = ((void)tz, 0);"
                print "#endif"
                done = 1; next } { print }' "$hwclock_c" >"$hwclock_c.new"
        mv "$hwclock_c.new" "$hwclock_c"
    fi
    grep -q 'rv32vm: no settimeofday syscall' "$hwclock_c" ||
        die "cannot apply the settimeofday guard to $hwclock_c"

    write_zig_wrappers
    out="$build/busybox-build"
    mkdir -p "$out"
    local bmake=(make -C "$src" O="$out" CROSS_COMPILE="$build/zig-tools/riscv32-zig-" HOSTCC=gcc)
    log "busybox: configuring (allnoconfig + images/busybox.config)"
    "${bmake[@]}" allnoconfig >"$out/config.log" 2>&1 || die "busybox allnoconfig failed: $out/config.log"
    config="$out/.config"
    while IFS= read -r line; do
        case "$line" in CONFIG_*=*) ;; *) continue ;; esac
        key="${line%%=*}"
        sed -i -e "/^$key=/d" -e "/^# $key is not set/d" "$config"
        echo "$line" >>"$config"
    done <"$images/busybox.config"
    sed -i -e '/^CONFIG_EXTRA_CFLAGS=/d' -e '/^CONFIG_EXTRA_LDFLAGS=/d' "$config"
    echo "CONFIG_EXTRA_CFLAGS=\"-DBB_GLOBAL_CONST= -ffile-prefix-map=$src=busybox -ffile-prefix-map=$out=build\"" >>"$config"
    echo 'CONFIG_EXTRA_LDFLAGS=""' >>"$config"
    yes_oldconfig "${bmake[@]}" >>"$out/config.log" 2>&1 || die "busybox oldconfig failed: $out/config.log"
    verify_fragment "$config" "$images/busybox.config"
    log "busybox: building with -j$jobs (log: $out/build.log)"
    if ! nice -n 10 "${bmake[@]}" -j"$jobs" busybox busybox.links >"$out/build.log" 2>&1; then
        tail -n 30 "$out/build.log" >&2
        die "busybox build failed, see $out/build.log"
    fi
    grep -vE '^CONFIG_EXTRA_CFLAGS=' "$config" >"$images/busybox-full.config"
    log "busybox: $(stat -c %s "$out/busybox") bytes"
}

# --- cksum-test ------------------------------------------------------------------------------------
step_cksum() {
    local out="$build/cksum-test"
    mkdir -p "$out"
    python3 -m ziglang cc -target riscv32-linux-musl -O2 -static -g0 -Wall -Wextra \
        -ffile-prefix-map="$repo"=. -o "$out/cksum-test" "$images/src/cksum-test.c" -lm
    "$KERNEL_TRIPLET"strip "$out/cksum-test"
    # The expected output comes from the same source compiled for the host, not from any guest.
    gcc -O2 -Wall -Wextra -o "$out/cksum-test-host" "$images/src/cksum-test.c" -lm
    "$out/cksum-test-host" >"$out/expected.txt"
    if command -v qemu-riscv32 >/dev/null; then
        qemu-riscv32 "$out/cksum-test" | cmp -s - "$out/expected.txt" ||
            die "cksum-test under qemu-riscv32 disagrees with the host build"
    fi
    log "cksum-test: expected output: $(head -n1 "$out/expected.txt")"
}

# --- root filesystem trees -------------------------------------------------------------------------
# Fill directory $1 with busybox, its applet links, cksum-test and the overlays named in $2...
populate_tree() {
    local root="$1" overlay link target depth
    shift
    rm -rf "$root"
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,mnt,run,var/log}
    install -m 0755 "$build/busybox-build/busybox" "$root/bin/busybox"
    install -m 0755 "$build/cksum-test/cksum-test" "$root/bin/cksum-test"
    while IFS= read -r link; do
        if [ -z "$link" ] || [ -e "$root$link" ]; then continue; fi
        depth="$(echo "${link#/}" | tr -cd '/' | wc -c)"
        target="bin/busybox"
        while [ "$depth" -gt 0 ]; do target="../$target"; depth=$((depth - 1)); done
        ln -s "$target" "$root$link"
    done <"$build/busybox-build/busybox.links"
    for overlay in "$@"; do cp -R "$images/overlay/$overlay/." "$root/"; done
    # Modes independent of the checkout and umask: scripts 0755, other files 0644.
    find "$root" -type d -exec chmod 0755 {} +
    find "$root" -type f -exec sh -c 'for f; do
        if [ "$(head -c2 "$f")" = "#!" ] || [ "${f##*/}" = busybox ] || [ "${f##*/}" = cksum-test ]
        then chmod 0755 "$f"; else chmod 0644 "$f"; fi; done' sh {} +
    chmod 1777 "$root/tmp"
    chmod 0700 "$root/root"
    find "$root" -depth -exec touch -h -d "@$EPOCH" {} +
}

step_initramfs() {
    local root="$build/initramfs-root"
    populate_tree "$root" common initramfs
    python3 "$images/tools/mkcpio.py" --root "$root" --mtime "$EPOCH" \
        --node dev/console:c:5:1:600 --node dev/null:c:1:3:666 "$images/initramfs.cpio.gz"
    log "initramfs: images/initramfs.cpio.gz ($(stat -c %s "$images/initramfs.cpio.gz") bytes)"
}

step_rootfs() {
    is_root || die "the rootfs step needs root (file owners in the image are taken from the tree)"
    local root="$build/rootfs-root" img="$build/rootfs.ext2"
    populate_tree "$root" common rootfs
    chown -R -h 0:0 "$root"
    rm -f "$img"
    # Our own mke2fs.conf: nothing depends on the host's /etc/mke2fs.conf.
    cat >"$build/mke2fs.conf" <<'CONF'
[defaults]
	base_features = sparse_super,large_file,filetype,dir_index,ext_attr
	default_mntopts = user_xattr
	blocksize = 1024
	inode_size = 256
	inode_ratio = 8192
[fs_types]
	ext2 = {
		inode_ratio = 8192
	}
	small = {
		inode_ratio = 8192
	}
	floppy = {
		inode_ratio = 8192
	}
CONF
    truncate -s "$ROOTFS_SIZE" "$img"
    E2FSPROGS_FAKE_TIME=$EPOCH MKE2FS_CONFIG="$build/mke2fs.conf" mke2fs -q -F -t ext2 -N 1024 -m 0 \
        -L rv32vm-root -U "$ROOTFS_UUID" -E "root_owner=0:0,hash_seed=$ROOTFS_HASH_SEED" \
        -d "$root" "$img"
    # mke2fs -d copies each file's ctime (and atime) from the tree, and ctime cannot be set on
    # the host: pin all four timestamps of every inode to the epoch (`sif` also zeroes the
    # nanoseconds). Inode numbers do not depend on the host: mke2fs 1.47 adds entries sorted.
    (cd "$root" && find . -mindepth 1 | sed 's|^\.||' | LC_ALL=C sort) |
        { echo /; echo /lost+found; cat; } |
        awk -v t="@$EPOCH" '{ for (i = 1; i <= 4; i++) print "sif \"" $0 "\" " f[i] " " t }
            BEGIN { split("atime ctime mtime crtime", f, " ") }' >"$build/rootfs.debugfs"
    E2FSPROGS_FAKE_TIME=$EPOCH debugfs -w -f "$build/rootfs.debugfs" "$img" >"$build/rootfs.debugfs.log" 2>&1 ||
        die "debugfs failed, see $build/rootfs.debugfs.log"
    if grep -v '^debugfs' "$build/rootfs.debugfs.log" | grep -q .; then
        die "debugfs reported errors, see $build/rootfs.debugfs.log"
    fi
    E2FSPROGS_FAKE_TIME=$EPOCH e2fsck -fn "$img" >"$build/rootfs.fsck.log" 2>&1 ||
        die "e2fsck reports problems in the new image, see $build/rootfs.fsck.log"
    cp --sparse=always "$img" "$images/rootfs.ext2"
    log "rootfs: images/rootfs.ext2 ($(stat -c %s "$images/rootfs.ext2") bytes," \
        "$(du -k "$images/rootfs.ext2" | cut -f1) KiB allocated)"
}

# --- OpenSBI ---------------------------------------------------------------------------------------
step_opensbi() {
    local aptdir="$build/opensbi-apt" tarball src out index_sum
    tarball="$aptdir/src/opensbi_$OPENSBI_VERSION.orig.tar.gz"
    # Debian bookworm has no opensbi 1.6 source; trixie's is fetched through a private apt list,
    # so the machine's own sources are left alone. The .dsc of an older revision may 404: only the
    # orig tarball is needed, checked against the (signed) Sources index and the pinned sha256.
    local apt_opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache")
    if [ ! -f "$tarball" ] || [ "$(sha256sum "$tarball" | cut -d' ' -f1)" != "$OPENSBI_ORIG_SHA256" ]; then
        mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/src"
        echo 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' \
            >"$aptdir/sources.list"
        apt-get -q "${apt_opts[@]}" update >"$aptdir/update.log" 2>&1 ||
            die "apt-get update (trixie deb-src) failed, see $aptdir/update.log"
        # The stanza of our version in the Sources index; its Checksums-Sha256 line for the tarball.
        index_sum="$(apt-cache "${apt_opts[@]}" showsrc opensbi |
            awk -v v="$OPENSBI_DEBIAN_VERSION" -v f="opensbi_$OPENSBI_VERSION.orig.tar.gz" '
                /^$/ { ours = 0 } /^Version: / { ours = ($2 == v) }
                /^Checksums-Sha256:/ { s = 1; next } /^[^ ]/ { s = 0 }
                ours && s && $3 == f { print $1; exit }')"
        [ "$index_sum" = "$OPENSBI_ORIG_SHA256" ] ||
            die "the Sources index says sha256 '$index_sum' for the OpenSBI tarball, expected $OPENSBI_ORIG_SHA256"
        (cd "$aptdir/src" && apt-get -q "${apt_opts[@]}" source --download-only \
            "opensbi=$OPENSBI_DEBIAN_VERSION") >"$aptdir/source.log" 2>&1 || true
        [ -f "$tarball" ] || die "apt-get source did not fetch $tarball, see $aptdir/source.log"
        [ "$(sha256sum "$tarball" | cut -d' ' -f1)" = "$OPENSBI_ORIG_SHA256" ] ||
            die "sha256 mismatch for $tarball"
    fi
    src="$build/opensbi-$OPENSBI_VERSION"
    out="$build/opensbi-build"
    rm -rf "$src" "$out"
    mkdir -p "$src"
    tar -C "$src" --strip-components=1 -xzf "$tarball"
    log "opensbi: building fw_dynamic.bin (log: $out.log)"
    if ! nice -n 10 make -C "$src" O="$out" -j"$jobs" CROSS_COMPILE="$KERNEL_TRIPLET" \
        PLATFORM=generic PLATFORM_RISCV_XLEN=32 PLATFORM_RISCV_ISA=rv32imac_zicsr_zifencei \
        PLATFORM_RISCV_ABI=ilp32 >"$out.log" 2>&1; then
        tail -n 30 "$out.log" >&2
        die "OpenSBI build failed, see $out.log"
    fi
    install -m 0644 "$out/platform/generic/firmware/fw_dynamic.bin" "$images/fw_dynamic.bin"
    log "opensbi: images/fw_dynamic.bin ($(stat -c %s "$images/fw_dynamic.bin") bytes)"
}

# --- manifest --------------------------------------------------------------------------------------
artifact_line() {
    local file="$images/$1"
    [ -f "$file" ] || die "images/$1 is missing: build it first"
    printf '%-20s %10s  %s\n' "$1" "$(stat -c %s "$file")" "$(sha256sum "$file" | cut -d' ' -f1)"
}

step_manifest() {
    local bb_src bb_version bb_md5 zig_version
    bb_src="$(busybox_source_dir)"
    bb_version="$(sed -n '1s/^busybox (\([^)]*\)).*/\1/p' "$bb_src/debian/changelog" 2>/dev/null)"
    bb_md5="$(md5sum "$build/busybox-build/busybox" | cut -d' ' -f1)"
    zig_version="$(python3 -m ziglang version)"
    {
        echo "# rv32vm guest images: written by scripts/build-images.sh (do not edit; see docs/images.md)"
        echo "# Every timestamp in the artifacts is SOURCE_DATE_EPOCH=$EPOCH ($(date -u -d "@$EPOCH" +%FT%TZ))."
        echo
        echo "## Artifacts (name, size in bytes, sha256)"
        artifact_line Image
        artifact_line initramfs.cpio.gz
        artifact_line rootfs.ext2
        artifact_line fw_dynamic.bin
        echo
        echo "## Inputs"
        echo "linux-source-6.12            $(pkg_version linux-source-6.12) (Debian bookworm-security; Linux $(sed -n 's/^SUBLEVEL = //p' "$build/linux-source-6.12/Makefile" | sed 's/^/6.12./'))"
        echo "gcc-riscv64-linux-gnu        $(pkg_version gcc-riscv64-linux-gnu) ($("$KERNEL_TRIPLET"gcc --version | head -n1))"
        echo "binutils-riscv64-linux-gnu   $(pkg_version binutils-riscv64-linux-gnu)"
        echo "busybox (source package)     $bb_version (apt-get source busybox, Debian bookworm)"
        echo "opensbi_$OPENSBI_VERSION.orig.tar.gz      sha256 $OPENSBI_ORIG_SHA256 (Debian trixie source opensbi $OPENSBI_DEBIAN_VERSION)"
        echo "ziglang (PyPI)               $(python3 -m pip show ziglang 2>/dev/null | sed -n 's/^Version: //p') (zig $zig_version, target riscv32-linux-musl: rv32gc, ilp32d)"
        echo "e2fsprogs                    $(pkg_version e2fsprogs)"
        echo "python3 (gzip for the cpio)  $(python3 -c 'import sys, zlib; print(sys.version.split()[0], "zlib", zlib.ZLIB_VERSION)')"
        echo
        echo "## How each artifact is built (scripts/build-images.sh STEP)"
        echo "Image              kernel: make ARCH=riscv CROSS_COMPILE=$KERNEL_TRIPLET allnoconfig;"
        echo "                   merge_config.sh -m .config images/linux.config; make olddefconfig;"
        echo "                   (every fragment line verified); make Image. KBUILD_BUILD_TIMESTAMP='$KBUILD_BUILD_TIMESTAMP'"
        echo "                   KBUILD_BUILD_USER=rv32vm KBUILD_BUILD_HOST=rv32vm KBUILD_BUILD_VERSION=1."
        echo "                   Full config: images/linux-full.config."
        echo "initramfs.cpio.gz  busybox: make allnoconfig + images/busybox.config, oldconfig, make busybox"
        echo "                   with CROSS_COMPILE=zig wrapper (python3 -m ziglang cc -target riscv32-linux-musl);"
        echo "                   cksum: zig cc -O2 -static images/src/cksum-test.c; initramfs:"
        echo "                   images/tools/mkcpio.py --mtime $EPOCH (newc, sorted, 0:0, gzip -9 mtime 0)"
        echo "                   over busybox + links + images/overlay/{common,initramfs}."
        echo "rootfs.ext2        rootfs: truncate -s $ROOTFS_SIZE; E2FSPROGS_FAKE_TIME=$EPOCH MKE2FS_CONFIG=(ours: 1 KiB"
        echo "                   blocks, 256-byte inodes) mke2fs -t ext2 -N 1024 -m 0 -U $ROOTFS_UUID"
        echo "                   -E root_owner=0:0,hash_seed=$ROOTFS_HASH_SEED -d TREE rootfs.ext2;"
        echo "                   debugfs -w: every inode's atime/ctime/mtime/crtime set to @$EPOCH"
        echo "                   over busybox + links + images/overlay/{common,rootfs}."
        echo "fw_dynamic.bin     opensbi: make CROSS_COMPILE=$KERNEL_TRIPLET PLATFORM=generic PLATFORM_RISCV_XLEN=32"
        echo "                   PLATFORM_RISCV_ISA=rv32imac_zicsr_zifencei PLATFORM_RISCV_ABI=ilp32"
        echo
        echo "## Guest contents (for tests)"
        echo "/bin/busybox       $(stat -c %s "$build/busybox-build/busybox") bytes, md5 $bb_md5"
        echo "                   sha256 $(sha256sum "$build/busybox-build/busybox" | cut -d' ' -f1)"
        echo "/bin/cksum-test    expected output (from a host build of images/src/cksum-test.c):"
        sed 's/^/                   /' "$build/cksum-test/expected.txt"
    } >"$images/manifest.txt"
    log "manifest: images/manifest.txt"
}

# --- check: boot under QEMU ------------------------------------------------------------------------
step_check() {
    command -v qemu-system-riscv32 >/dev/null || die "qemu-system-riscv32 is missing (qemu-system-misc)"
    # Expected values come from the committed manifest, so the committed images can be checked
    # without building anything.
    local cksum_line bb_md5 logs="$build/check" manifest="$images/manifest.txt"
    mkdir -p "$logs"
    cksum_line="$(grep -m1 -o 'cksum-test: crc32=.*' "$manifest")" ||
        die "no cksum-test output in images/manifest.txt"
    bb_md5="$(sed -n 's|^/bin/busybox .* md5 \([0-9a-f]\{32\}\)$|\1|p' "$manifest")"
    [ -n "$bb_md5" ] || die "no busybox md5 in images/manifest.txt"
    local qemu=(qemu-system-riscv32 -M virt -m 256M -nographic -kernel "$images/Image")
    # shellcheck disable=SC2054 # QEMU's comma-separated option values, not array elements
    local disk=(-drive "file=$images/rootfs.ext2,format=raw,if=none,id=hd0,snapshot=on"
        -device virtio-blk-device,drive=hd0)
    local common_checks=(--check "uname -a=>6.12" --check "uname -m=>riscv32"
        --check "/bin/cksum-test=>$cksum_line" --check "md5sum /bin/busybox=>$bb_md5")
    local test="$images/tools/boot-test.py" fw="$images/fw_dynamic.bin"

    log "check 1/5: initramfs, images/fw_dynamic.bin, vm-exit 3"
    python3 "$test" --log "$logs/1.log" "${common_checks[@]}" --check "dmesg=>SBI implementation ID=0x1 Version=0x10006" \
        --final "vm-exit 3" --final-status 3 -- \
        "${qemu[@]}" -bios "$fw" -initrd "$images/initramfs.cpio.gz" -append "console=ttyS0"
    log "check 2/5: initramfs, images/fw_dynamic.bin, poweroff -f"
    python3 "$test" --log "$logs/2.log" --check "uname -a=>riscv32" \
        --final "poweroff -f" --final-status 0 -- \
        "${qemu[@]}" -bios "$fw" -initrd "$images/initramfs.cpio.gz" -append "console=ttyS0"
    log "check 3/5: ext2 rootfs on virtio-blk (ext2 driver), busybox init, poweroff"
    python3 "$test" --log "$logs/3.log" "${common_checks[@]}" \
        --check "grep ' / ' /proc/mounts=>/dev/root / ext2 rw" \
        --check "echo written > /root/t && sync && cat /root/t=>written" \
        --check "echo 6 7 | awk '{ print \$1 * \$2 }'=>42" \
        --check "echo abc | sed s/b/X/ | grep aXc=>aXc" \
        --check "echo -n abc | sha256sum=>ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" \
        --check "hwclock -r -u=>20" --check "ps=>init" \
        --final "poweroff" --final-status 0 -- \
        "${qemu[@]}" -bios "$fw" "${disk[@]}" -append "console=ttyS0 root=/dev/vda rw rootfstype=ext2"
    log "check 4/5: ext2 rootfs on virtio-blk (probed: the ext4 driver mounts it), poweroff -f"
    python3 "$test" --log "$logs/4.log" --check "grep ' / ' /proc/mounts=>/dev/root / ext4 rw" \
        --final "poweroff -f" --final-status 0 -- \
        "${qemu[@]}" -bios "$fw" "${disk[@]}" -append "console=ttyS0 root=/dev/vda rw"
    # Debian bookworm's qemu-system-data ships only the riscv64 OpenSBI; use QEMU's own rv32
    # firmware (-bios default) where a QEMU package provides it.
    if [ -f /usr/share/qemu/opensbi-riscv32-generic-fw_dynamic.bin ]; then
        log "check 5/5: initramfs, QEMU's own OpenSBI (-bios default), vm-exit 0"
        python3 "$test" --log "$logs/5.log" --check "uname -a=>riscv32" --final "vm-exit 0" -- \
            "${qemu[@]}" -bios default -initrd "$images/initramfs.cpio.gz" -append "console=ttyS0"
    else
        log "check 5/5: skipped: this QEMU has no riscv32 OpenSBI of its own (-bios default)"
    fi
    log "check: all boots passed (console logs in $logs)"
}

# --- main ------------------------------------------------------------------------------------------
for step in "${steps[@]}"; do
    if [ "$step" = deps ] && [ $no_apt = 1 ]; then
        log "deps: skipped (--no-apt)"
        continue
    fi
    start=$(date +%s)
    "step_$step"
    echo "$(($(date +%s) - start))" >"$build/times/$step"
    log "$step: done in $(cat "$build/times/$step") s"
done
