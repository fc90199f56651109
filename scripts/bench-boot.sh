#!/usr/bin/env bash
# Boot benchmark: wall time from start to the first shell prompt of the bundled kernel, with the
# initramfs and with the ext2 rootfs on virtio-blk (snapshot), under rv32vm (built-in SBI and
# OpenSBI) and qemu-system-riscv32 -M virt (OpenSBI via -bios), in the same run. Prints the best
# of N runs and the ratio rv32vm / QEMU for the same root filesystem.
# Usage: scripts/bench-boot.sh [--runs N] [--tiers "interp ..."] [--warm] [--no-build]
# --warm times rv32vm with its code cache filled by an untimed boot first (default: no cache,
# every tier-2 region compiled in the boot that is timed); --no-build skips cargo build.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=3
tiers="interp"
warm=0
build=1
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --tiers) tiers="$2"; shift 2 ;;
    --warm) warm=1; shift ;;
    --no-build) build=0; shift ;;
    *) echo "usage: $0 [--runs N] [--tiers LIST] [--warm] [--no-build]" >&2; exit 2 ;;
    esac
done
command -v qemu-system-riscv32 >/dev/null || { echo "install qemu-system-misc" >&2; exit 1; }
if [ $build = 1 ]; then (cd "$repo" && cargo build --release -q); fi
vm="${CARGO_TARGET_DIR:-$repo/target}/release/rv32vm"
img="$repo/images"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Tier 2's code cache: off, or a fresh one this run fills (--warm).
if [ $warm = 1 ]; then export RV32VM_CODE_CACHE="$work/code-cache"; else export RV32VM_CODE_CACHE=off; fi

# time_to_prompt CMD...: seconds until "root@rv32vm:~# " appears on stdout; then kills CMD.
time_to_prompt() {
    python3 - "$@" <<'PY'
import os, subprocess, sys, time
start = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
buf = b""
while True:
    chunk = os.read(p.stdout.fileno(), 4096)
    if not chunk:
        print("nan"); sys.exit(1)
    buf += chunk
    if b"root@rv32vm:~# " in buf:
        print(f"{time.monotonic() - start:.3f}")
        break
    if time.monotonic() - start > 300:
        print("nan"); break
p.kill(); p.wait()
PY
}

best() { sort -g | head -n1; }

declare -A result
run_case() {
    local name="$1"; shift
    local times=()
    # --warm: one untimed boot fills the code cache (QEMU has none: it runs as usual).
    [ $warm = 1 ] && [[ $name = rv32vm-* ]] && time_to_prompt "$@" >/dev/null
    for _ in $(seq "$runs"); do times+=("$(time_to_prompt "$@")"); done
    result[$name]=$(printf '%s\n' "${times[@]}" | best)
}

qemu=(qemu-system-riscv32 -M virt -m 256M -nographic -bios "$img/fw_dynamic.bin" -kernel "$img/Image")
qemu_disk=(-drive "file=$img/rootfs.ext2,format=raw,if=none,id=vda,snapshot=on"
           -device virtio-blk-device,drive=vda -append "console=ttyS0 root=/dev/vda rw")
run_case qemu-initramfs "${qemu[@]}" -initrd "$img/initramfs.cpio.gz" -append "console=ttyS0"
run_case qemu-rootfs "${qemu[@]}" "${qemu_disk[@]}"
cases=()
for t in $tiers; do
    for fw in builtin opensbi; do
        bios=(); [ $fw = opensbi ] && bios=(--bios "$img/fw_dynamic.bin")
        run_case "rv32vm-$t-$fw-initramfs" "$vm" boot --tier "$t" --memory 256M "${bios[@]}" \
            --initrd "$img/initramfs.cpio.gz"
        run_case "rv32vm-$t-$fw-rootfs" "$vm" boot --tier "$t" --memory 256M "${bios[@]}"
        cases+=("rv32vm-$t-$fw-initramfs" "rv32vm-$t-$fw-rootfs")
    done
done

printf '%-34s %10s %8s\n' runner "seconds" "vs qemu"
for k in qemu-initramfs qemu-rootfs "${cases[@]}"; do
    q=${result[qemu-${k##*-}]}
    printf '%-34s %10s %8s\n' "$k" "${result[$k]}" "$(python3 -c "print(f'{${result[$k]}/$q:.2f}x')")"
done
