#!/usr/bin/env bash
# Build a static riscv32 (rv32gc, ilp32d hard-float) busybox from Debian's busybox source
# package with zig as the C compiler. Output: target/busybox/busybox.
# Configuration: tests/busybox/busybox.config, a fragment applied on top of `make allnoconfig`.
#
# Needs python3 -m ziglang (pip install ziglang). Missing host tools (make, gcc, dpkg-dev, ...)
# are installed with apt-get when running as root. The source comes from `apt-get source
# busybox` (a deb-src entry is added and apt-get update run when needed: that needs root).
# Non-interactive (CI=true). Reproducible: the binary depends only on the source, the fragment
# and the zig version (SOURCE_DATE_EPOCH from the Debian changelog, fixed build paths,
# KBUILD_BUILD_* fixed); two clean builds give the same sha256.
#
# Usage: scripts/build-busybox.sh [--force]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src_root="$repo/target/busybox-src"
out_dir="$repo/target/busybox"
fragment="$repo/tests/busybox/busybox.config"
force=0
[ "${1:-}" = "--force" ] && force=1

log() { echo "build-busybox.sh: $*" >&2; }
die() {
    log "ERROR: $*"
    exit 1
}

python3 -m ziglang version >/dev/null 2>&1 ||
    die "zig is not available as 'python3 -m ziglang'. Install it with: pip install ziglang"

export DEBIAN_FRONTEND=noninteractive
apt_updated=0
# apt_install PACKAGE...: install Debian packages (root only), running apt-get update once.
apt_install() {
    [ "$(id -u)" = 0 ] || die "missing Debian packages: $* (run: apt-get install -y $*)"
    if [ $apt_updated = 0 ]; then
        apt-get update -q
        apt_updated=1
    fi
    apt-get install -y -q --no-install-recommends "$@"
}
# Host tools: make and gcc build kconfig; bzip2/xz unpack the source package.
missing_packages=()
command -v make >/dev/null || missing_packages+=(make)
command -v gcc >/dev/null || missing_packages+=(gcc libc6-dev)
command -v bzip2 >/dev/null || missing_packages+=(bzip2)
command -v xz >/dev/null || missing_packages+=(xz-utils)
command -v dpkg-source >/dev/null || missing_packages+=(dpkg-dev)
[ ${#missing_packages[@]} = 0 ] || apt_install "${missing_packages[@]}"

# Everything the binary depends on besides the source, hashed for the up-to-date check.
stamp_input() {
    {
        cat "$fragment" "${BASH_SOURCE[0]}"
        python3 -m ziglang version
    } | sha256sum | cut -d' ' -f1
}
want_stamp="$(stamp_input)"
if [ $force = 0 ] && [ -x "$out_dir/busybox" ] && [ -f "$out_dir/.stamp" ] &&
    [ "$(cat "$out_dir/.stamp")" = "$want_stamp" ]; then
    log "up to date: ${out_dir#"$repo"/}/busybox"
    exit 0
fi
start_time=$(date +%s)

# --- 1. Source: apt-get source busybox (dpkg-source applies Debian's patches). --------------
find_src() {
    [ -d "$src_root" ] || return 0
    find "$src_root" -mindepth 1 -maxdepth 1 -type d -name 'busybox-*' | sort | tail -n1
}
src_dir="$(find_src)"
if [ -z "$src_dir" ]; then
    [ "$(id -u)" = 0 ] || die "fetching the busybox source needs root (apt-get); run once as root"
    if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
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
    fi
    # Refresh (again) after adding deb-src: its index may never have been fetched.
    apt-get update -q
    mkdir -p "$src_root"
    (cd "$src_root" && apt-get source -q busybox)
    src_dir="$(find_src)"
    [ -n "$src_dir" ] || die "apt-get source busybox produced no busybox-* directory"
fi
log "source: ${src_dir#"$repo"/}"

# zig cc is clang. clang treats `extern T *const ptr_to_globals` as never changing and hoists
# reads above the one store that sets it (awk, and every applet using INIT_G, crash on a NULL
# pointer). Busybox's documented escape hatch is -DBB_GLOBAL_CONST='' (set below), but 1.35
# declares ptr_to_globals with a literal `const`; make it use the macro, as later busybox does.
libbb_h="$src_dir/include/libbb.h"
if grep -q '^extern struct globals \*const ptr_to_globals;' "$libbb_h"; then
    sed -i 's/^extern struct globals \*const ptr_to_globals;/extern struct globals *BB_GLOBAL_CONST ptr_to_globals;/' "$libbb_h"
fi
grep -q '^extern struct globals \*BB_GLOBAL_CONST ptr_to_globals;' "$libbb_h" ||
    die "cannot apply the ptr_to_globals clang fix to $libbb_h"

# Run every applet without exec (like the NOEXEC ones: fork, then call the applet's main).
# qemu-riscv32, our reference, cannot execve() a riscv32 binary on a host without binfmt_misc:
# busybox's re-exec of /proc/self/exe fails there and the shell then falls back to $PATH,
# i.e. to host programs. With this, the shell, xargs and find -exec never exec for an applet,
# so both emulators run exactly the same guest code (fork + wait, no execve).
busybox_h="$src_dir/include/busybox.h"
noexec_orig='# define APPLET_IS_NOEXEC(i) (applet_flags[(i)/4] & (1 << ((2 * ((i)%4))+1)))'
noexec_all='# define APPLET_IS_NOEXEC(i) ((void)(i), 1) /* rv32vm tests: never re-exec */'
if grep -qxF "$noexec_orig" "$busybox_h"; then
    awk -v o="$noexec_orig" -v n="$noexec_all" '$0 == o { print n; next } { print }' \
        "$busybox_h" >"$busybox_h.new"
    mv "$busybox_h.new" "$busybox_h"
fi
grep -qxF "$noexec_all" "$busybox_h" || die "cannot apply the all-applets-NOEXEC change to $busybox_h"

# --- 2. Tool wrappers: zig for cc/ar/..., dropping GNU-ld-only options. --------------------
tools="$out_dir/tools"
mkdir -p "$tools"
cat >"$tools/riscv32-zig-cc" <<'WRAP'
#!/usr/bin/env bash
# zig cc for riscv32-linux-musl, minus the GNU-ld options zig's linker rejects (also inside
# -Wl,a,b,c lists; -Map and --sort-section take a separate value, dropped with them).
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
            joined="$(IFS=','; echo "${kept[*]}")"
            args+=("-Wl,$joined")
        fi
        ;;
    *) args+=("$a") ;;
    esac
done
exec python3 -m ziglang cc -target riscv32-linux-musl "${args[@]}"
WRAP
chmod +x "$tools/riscv32-zig-cc"
for t in ar ranlib objcopy strip nm; do
    printf '#!/bin/sh\nexec python3 -m ziglang %s "$@"\n' "$t" >"$tools/riscv32-zig-$t"
    chmod +x "$tools/riscv32-zig-$t"
done
# objdump is only used for size reports; map it to the host one.
ln -sf "$(command -v objdump || echo /bin/true)" "$tools/riscv32-zig-objdump"
ln -sf "$tools/riscv32-zig-cc" "$tools/riscv32-zig-gcc"

# --- 3. Configure: allnoconfig + fragment, then verify every fragment line survived. --------
build="$out_dir/build"
rm -rf "$build"
mkdir -p "$build"
export ZIG_GLOBAL_CACHE_DIR="$repo/target/zig-cache" ZIG_LOCAL_CACHE_DIR="$repo/target/zig-cache"
changelog_date="$(sed -n '/^ -- .*>  /{s/^ -- .*>  //p;q}' "$src_dir/debian/changelog")"
SOURCE_DATE_EPOCH="$(date -d "$changelog_date" +%s)"
export SOURCE_DATE_EPOCH KBUILD_BUILD_TIMESTAMP="@$SOURCE_DATE_EPOCH"
export KBUILD_BUILD_USER=rv32vm KBUILD_BUILD_HOST=rv32vm TZ=UTC LC_ALL=C
make_args=(-C "$src_dir" O="$build" CROSS_COMPILE="$tools/riscv32-zig-" HOSTCC=gcc
    SKIP_STRIP=y)
make "${make_args[@]}" allnoconfig >"$build/config.log" 2>&1 ||
    die "make allnoconfig failed, see ${build#"$repo"/}/config.log"
config="$build/.config"
while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    key="${line%%=*}"
    value="${line#*=}"
    sed -i -e "/^$key=/d" -e "/^# $key is not set/d" "$config"
    if [ "$value" = n ]; then
        echo "# $key is not set" >>"$config"
    else
        echo "$line" >>"$config"
    fi
done <"$fragment"
# Keep zig's defaults for the target (rv32gc, hard float) and reproducible paths.
sed -i -e '/^CONFIG_EXTRA_CFLAGS=/d' -e '/^CONFIG_EXTRA_LDFLAGS=/d' "$config"
echo "CONFIG_EXTRA_CFLAGS=\"-DBB_GLOBAL_CONST= -ffile-prefix-map=$src_dir=busybox -ffile-prefix-map=$build=build\"" >>"$config"
echo 'CONFIG_EXTRA_LDFLAGS=""' >>"$config"
# `yes` dies of SIGPIPE when oldconfig stops reading: ignore its status, not make's.
set +o pipefail
yes "" | make "${make_args[@]}" oldconfig >>"$build/config.log" 2>&1
status=${PIPESTATUS[1]}
set -o pipefail
[ "$status" = 0 ] || die "make oldconfig failed, see ${build#"$repo"/}/config.log"
missing=0
while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    key="${line%%=*}"
    value="${line#*=}"
    if [ "$value" = n ]; then
        grep -qx "# $key is not set" "$config" || { log "config lost: $line"; missing=1; }
    else
        grep -qxF "$line" "$config" || { log "config lost: $line"; missing=1; }
    fi
done <"$fragment"
[ $missing = 0 ] || die "some fragment lines did not survive oldconfig (see above)"

# --- 4. Build. ---------------------------------------------------------------------------------
log "building (log: ${build#"$repo"/}/build.log)"
if ! make "${make_args[@]}" -j"$(nproc)" busybox >"$build/build.log" 2>&1; then
    tail -n 40 "$build/build.log" >&2
    die "busybox build failed, see ${build#"$repo"/}/build.log"
fi
cp "$build/busybox" "$out_dir/busybox.tmp"
mv "$out_dir/busybox.tmp" "$out_dir/busybox"
cp "$config" "$out_dir/busybox.config.full"
echo "$want_stamp" >"$out_dir/.stamp"
log "built ${out_dir#"$repo"/}/busybox in $(($(date +%s) - start_time)) s" \
    "(sha256 $(sha256sum "$out_dir/busybox" | cut -c1-16))"
