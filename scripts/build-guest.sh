#!/usr/bin/env bash
# Build the user-mode guest test programs tests/guest/*.c into target/guest/NAME as static
# riscv32-linux-musl executables (rv32gc, ilp32d hard-float ABI, zig's default for the target).
#
# A source may add compiler flags with a line `// cflags: FLAGS` (for example a -mcpu with
# extra extensions). Rebuilds only what is out of date (source, guest_util.h, this script or
# the flags changed). Usage: scripts/build-guest.sh [NAME...]   (default: all programs)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src_dir="$repo/tests/guest"
out_dir="${GUEST_OUT_DIR:-$repo/target/guest}"
zig=(python3 -m ziglang)

if ! "${zig[@]}" version >/dev/null 2>&1; then
    echo "build-guest.sh: zig is not available as 'python3 -m ziglang'." >&2
    echo "  Install it with: pip install ziglang" >&2
    exit 1
fi

mkdir -p "$out_dir"
# zig keeps a global cache; keep it inside target/ so builds do not depend on $HOME state.
export ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$repo/target/zig-cache}"
export ZIG_LOCAL_CACHE_DIR="${ZIG_LOCAL_CACHE_DIR:-$repo/target/zig-cache}"

base_flags=(-target riscv32-linux-musl -O2 -static -g0 -Wall -Wno-unused-result
    -fno-stack-protector "-ffile-prefix-map=$repo=.")

if [ $# -gt 0 ]; then
    sources=()
    for name in "$@"; do sources+=("$src_dir/${name%.c}.c"); done
else
    sources=("$src_dir"/*.c)
fi

built=0
skipped=0
for src in "${sources[@]}"; do
    [ -f "$src" ] || { echo "build-guest.sh: no such source: $src" >&2; exit 1; }
    name="$(basename "$src" .c)"
    out="$out_dir/$name"
    extra="$(sed -n 's|^// cflags:[[:space:]]*||p' "$src" | tr '\n' ' ')"
    flags_file="$out_dir/.$name.flags"
    flags_line="${base_flags[*]} $extra"
    if [ -x "$out" ] && [ -f "$flags_file" ] && [ "$(cat "$flags_file")" = "$flags_line" ] \
        && [ "$out" -nt "$src" ] && [ "$out" -nt "$src_dir/guest_util.h" ] \
        && [ "$out" -nt "${BASH_SOURCE[0]}" ]; then
        skipped=$((skipped + 1))
        continue
    fi
    echo "  CC  $name ${extra:+($extra)}"
    # shellcheck disable=SC2086 # $extra is a list of flags on purpose
    if ! "${zig[@]}" cc "${base_flags[@]}" $extra -o "$out.tmp" "$src" -lm; then
        echo "build-guest.sh: FAILED to build $src" >&2
        rm -f "$out.tmp"
        exit 1
    fi
    mv "$out.tmp" "$out"
    printf '%s' "$flags_line" >"$flags_file"
    built=$((built + 1))
done
echo "build-guest.sh: $built built, $skipped up to date, output in ${out_dir#"$repo"/}"
