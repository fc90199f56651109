#!/usr/bin/env bash
# Builds every tests/isa/*.S (and the harness's negative controls in
# tests/isa/selftest/*.S, into a selftest/ subdirectory) into two ELF variants:
#   $OUT/bare/NAME.elf  HTIF tohost exit, for `rv32vm run --bare`
#   $OUT/qemu/NAME.elf  sifive,test0 exit, for the QEMU oracle
#                       (qemu-system-riscv32 -M virt -bios none -kernel ...)
# OUT defaults to target/isa (relative to the repository root). An ELF is
# rebuilt only when its source, test.h, link.ld or this script is newer.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$script_dir/../.." && pwd)"
OUT="${OUT:-$repo_root/target/isa}"
CC="${RISCV_CC:-riscv64-linux-gnu-gcc}"

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "error: $CC not found; install the Debian package gcc-riscv64-linux-gnu" \
         "(apt-get install -y gcc-riscv64-linux-gnu)" >&2
    exit 1
fi

# Zicond is not known to binutils 2.40 (Debian bookworm): its instructions are
# emitted with .insn in zicond.S, so it is not in -march.
MARCH="rv32gc_zba_zbb_zbc_zbs_zfh"
CFLAGS=(-march="$MARCH" -mabi=ilp32 -nostdlib -nostartfiles -static
        -fno-pic -no-pie -Wl,--build-id=none -Wl,--no-warn-rwx-segments -I "$script_dir/include" -T "$script_dir/link.ld")

deps=("$script_dir/include/test.h" "$script_dir/link.ld" "$script_dir/build.sh")

mkdir -p "$OUT/bare" "$OUT/qemu"

# True when $1 is missing or older than any of the remaining arguments.
needs_rebuild() {
    local target="$1"
    shift
    [[ -e "$target" ]] || return 0
    local dep
    for dep in "$@"; do
        [[ "$dep" -nt "$target" ]] && return 0
    done
    return 1
}

shopt -s nullglob
sources=("$script_dir"/*.S)
if [[ ${#sources[@]} -eq 0 ]]; then
    echo "error: no tests in $script_dir" >&2
    exit 1
fi
# Negative controls for the harness go to $OUT/<variant>/selftest/.
selftests=("$script_dir"/selftest/*.S)

built=0
for src in "${sources[@]}" "${selftests[@]}"; do
    name="$(basename "$src" .S)"
    subdir=""
    [[ "$(dirname "$src")" == "$script_dir/selftest" ]] && subdir="selftest/"
    for variant in bare qemu; do
        mkdir -p "$OUT/$variant/$subdir"
        elf="$OUT/$variant/$subdir$name.elf"
        if needs_rebuild "$elf" "$src" "${deps[@]}"; then
            defines=()
            [[ "$variant" == qemu ]] && defines=(-DQEMU_VIRT)
            # Build to a temporary name so an interrupted build never leaves
            # a fresh-looking but broken ELF behind.
            "$CC" "${CFLAGS[@]}" "${defines[@]}" -o "$elf.tmp" "$src"
            mv -f "$elf.tmp" "$elf"
            built=$((built + 1))
        fi
    done
done
echo "isa tests: ${#sources[@]} sources (+${#selftests[@]} selftests), $built ELF(s) rebuilt, output in $OUT"
