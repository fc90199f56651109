#!/usr/bin/env bash
# In-guest compute benchmark: tests/guest/bench.c run by a shell inside the bundled Linux (root
# on virtio-blk), under qemu-system-riscv32 -M virt and under rv32vm for each tier, in the same
# run. The time is the host wall time between two marker lines the guest prints around the
# benchmark; checksums must equal qemu's. Prints the best of N runs and the ratio rv32vm / QEMU.
#
# Usage: scripts/bench-guest.sh [--runs N] [--scale S] [--tiers "interp t1"] [--warm] [--no-build]
# --warm times rv32vm with its code cache filled by an untimed run first (default: no cache).
# Needs: qemu-system-misc, e2fsprogs (debugfs), python3, zig (scripts/setup.sh installs them).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=3
scale=1
tiers="interp t1 t2"
build=1
warm=0
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --tiers) tiers="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --warm) warm=1; shift ;;
    -h | --help) sed -n '2,10p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-guest.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
for tool in qemu-system-riscv32 debugfs python3; do
    command -v "$tool" >/dev/null ||
        { echo "bench-guest.sh: $tool missing (scripts/setup.sh installs it)" >&2; exit 1; }
done

vm="${CARGO_TARGET_DIR:-$repo/target}/release/rv32vm"
if [ $build = 1 ]; then
    (cd "$repo" && cargo build --release --quiet)
    "$repo/scripts/build-guest.sh" bench >/dev/null
fi
bench="$repo/target/guest/bench"
img="$repo/images"
[ -x "$bench" ] || { echo "bench-guest.sh: $bench missing (scripts/build-guest.sh bench)" >&2; exit 1; }

work="$(mktemp -d)"
# Tier 2's code cache: off, or a fresh one this run fills (--warm).
if [ $warm = 1 ]; then export RV32VM_CODE_CACHE="$work/code-cache"; else export RV32VM_CODE_CACHE=off; fi
trap 'rm -rf "$work"' EXIT
disk="$work/bench.ext2"
cp "$img/rootfs.ext2" "$disk"
debugfs -w -R "write $bench /root/bench" "$disk" >/dev/null 2>&1
debugfs -w -R "sif /root/bench mode 0100755" "$disk" >/dev/null 2>&1

# guest_time LABEL CMD...: boot CMD, run the benchmark in the guest shell, print the seconds
# between the markers; the checksums go to $work/LABEL.out.
guest_time() {
    local label="$1"
    shift
    python3 - "$work/$label.out" "$scale" "$@" <<'PY'
import os, re, subprocess, sys, time
out_path, scale, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
buf = b""
def wait_for(pattern, limit=600):
    global buf
    start = time.monotonic()
    while True:
        m = re.search(pattern, buf)
        if m:
            rest = buf[m.end():]
            buf = rest
            return m
        if time.monotonic() - start > limit:
            raise SystemExit(f"timeout waiting for {pattern!r}")
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            raise SystemExit(f"guest ended waiting for {pattern!r}")
        buf += chunk
def send(line):
    p.stdin.write(line.encode() + b"\n"); p.stdin.flush()
wait_for(rb"root@rv32vm:~# ")
send(f"echo BENCH-START; /root/bench {scale} > /tmp/out; echo BENCH-DONE=$?")
wait_for(rb"(?:^|\n)BENCH-START\r?\n")
start = time.monotonic()
m = wait_for(rb"(?:^|\n)BENCH-DONE=(\d+)\r?\n")
elapsed = time.monotonic() - start
send("cat /tmp/out; echo BENCH-END")
out = wait_for(rb"([\s\S]*?)\nBENCH-END\r?\n").group(1)
lines = [l.rstrip("\r") for l in out.decode(errors="replace").split("\n")]
lines = [l for l in lines if l and not l.startswith("cat /tmp/out")]
open(out_path, "w").write("\n".join(lines) + "\n")
send("poweroff -f")
try:
    p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
if m.group(1) != b"0":
    raise SystemExit(f"benchmark exited with {m.group(1).decode()}")
print(f"{elapsed:.3f}")
PY
}

best_of() {
    local label="$1" best="" t i
    shift
    # --warm: one untimed run fills the code cache.
    [ $warm = 1 ] && [ "$label" != qemu ] && { guest_time "$label" "$@" >/dev/null || true; }
    for ((i = 0; i < runs; i++)); do
        t=$(guest_time "$label" "$@") || { echo "FAILED: $label" >&2; return 1; }
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
    done
    echo "$best"
}

disk_opts="console=ttyS0 root=/dev/vda rw"
echo "in-guest compute benchmark (bench.c scale $scale, best of $runs; Linux root on virtio-blk)"
q=$(best_of qemu qemu-system-riscv32 -M virt -m 256M -nographic -bios "$img/fw_dynamic.bin" \
    -kernel "$img/Image" -append "$disk_opts" \
    -drive "file=$disk,format=raw,if=none,id=vda,snapshot=on" -device virtio-blk-device,drive=vda)
printf '%-28s %9s %9s  %s\n' runner time "vs qemu" check
printf '%-28s %8.3fs %8.2fx  %s\n' qemu-system-riscv32 "$q" 1 reference
status=0
for t in $tiers; do
    if "$vm" run --tier "$t" --bare /dev/null 2>&1 | grep -q "unknown tier"; then
        printf '%-28s %9s %9s  %s\n' "rv32vm --tier $t" - - "tier not available"
        continue
    fi
    if ! r=$(best_of "$t" "$vm" boot --tier "$t" --memory 256M --disk "$disk,snapshot"); then
        status=1
        continue
    fi
    check="checksums identical"
    cmp -s "$work/$t.out" "$work/qemu.out" || { check="CHECKSUMS DIFFER"; status=1; }
    printf '%-28s %8.3fs %8.2fx  %s\n' "rv32vm --tier $t" "$r" "$(echo "$r / $q" | bc -l)" "$check"
done
exit $status
