#!/usr/bin/env bash
# Host-integration benchmark, side by side with QEMU in one run (same kernel, same rootfs):
#   9P read    guest `time dd if=/mnt/host/big of=/dev/null bs=1M` of a SIZE MiB host file
#   9P write   guest `dd if=/dev/zero of=/mnt/host/out bs=1M count=SIZE`
#   net        SIZE MiB sent by the host into a forwarded port, received by `nc -l` in the guest
#              (time from connect until the guest has read everything and closed)
#   compute    40 x /bin/cksum-test in the guest, with and without --share/--net attached
#              (rv32vm only: the devices' cost on guest compute)
# rv32vm: --share D --net user,hostfwd=tcp:127.0.0.1:P-:5001. QEMU (7.2): -fsdev local,
# security_model=none + -device virtio-9p-device (what `-virtfs` means on a machine without
# PCI in the guest kernel), -netdev user,hostfwd=... + -device virtio-net-device. The guest
# mounts with the same options under both (images/overlay/common/etc/init.d/host-setup:
# msize=512000). Prints MB/s (best of N runs) and the ratio rv32vm / QEMU (> 1: rv32vm faster).
#
# Usage: scripts/bench-host.sh [--runs N] [--size MIB] [--tiers "interp t1"] [--no-build]
# Needs: qemu-system-misc, python3 (scripts/setup.sh installs them). Traffic stays on 127.0.0.1.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=3
size=64
tiers="t1"
build=1
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --tiers) tiers="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,18p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-host.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
command -v qemu-system-riscv32 >/dev/null || { echo "bench-host.sh: install qemu-system-misc" >&2; exit 1; }
if [ "$build" = 1 ]; then
    (cd "$repo" && cargo build --release -q)
fi
vm="${CARGO_TARGET_DIR:-$repo/target}/release/rv32vm"

exec python3 - "$repo" "$vm" "$runs" "$size" "$tiers" <<'PY'
import os, re, select, shutil, socket, subprocess, sys, tempfile, time

repo, vm, runs, size_mib, tiers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()
images = os.path.join(repo, "images")
PROMPT = b"# "
size = size_mib << 20

work = tempfile.mkdtemp(prefix="rv32vm-bench-host-")
share = os.path.join(work, "share")
os.mkdir(share)
with open(os.path.join(share, "big"), "wb") as f:
    block = os.urandom(1 << 20)
    for _ in range(size_mib):
        f.write(block)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Guest:
    """An emulator with the bundled rootfs, driven on its serial console."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        self.out = b""
        self.seen = 0
        self.n = 0
        self.wait_for(b"root@rv32vm:~# ", 300)

    def wait_for(self, pattern, limit=600):
        deadline = time.monotonic() + limit
        while True:
            at = self.out.find(pattern, self.seen)
            if at >= 0:
                text = self.out[self.seen:at + len(pattern)]
                self.seen = at + len(pattern)
                return text.decode(errors="replace")
            if time.monotonic() > deadline or self.p.poll() is not None:
                raise RuntimeError("no %r; console tail:\n%s" % (pattern, self.out[-2000:].decode(errors="replace")))
            ready, _, _ = select.select([self.p.stdout], [], [], 0.5)
            if ready:
                self.out += os.read(self.p.stdout.fileno(), 65536)

    def run(self, command, limit=600):
        self.n += 1
        marker = 1000 + self.n
        self.p.stdin.write(f"{command}; echo @@$(({marker}-1+1))@@\n".encode())
        self.p.stdin.flush()
        return self.wait_for(f"@@{marker}@@".encode(), limit)

    def stop(self):
        self.p.stdin.write(b"vm-exit 0\n")
        self.p.stdin.flush()
        try:
            self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def real_seconds(text):
    """The `real` time busybox `time` printed."""
    m = re.search(r"real\s+(\d+)m\s*([0-9.]+)s", text)
    if not m:
        raise RuntimeError("no time output in:\n" + text)
    return int(m.group(1)) * 60 + float(m.group(2))


def net_seconds(guest, port):
    guest.run("(nc -l -p 5001 >/dev/null; echo nc-$((40+2))) & sleep 1")
    payload = os.urandom(1 << 20)
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=600)
    for _ in range(size_mib):
        s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    elapsed = time.monotonic() - start
    s.close()
    guest.wait_for(b"nc-42")
    return elapsed


def compute_seconds(guest):
    return real_seconds(guest.run(
        "time sh -c 'i=0; while [ $i -lt 40 ]; do cksum-test >/dev/null; i=$((i+1)); done'"))


def measure(argv_for, with_compute):
    """Best-of-runs seconds for each case."""
    results = {}
    for _ in range(runs):
        port = free_port()
        guest = Guest(argv_for(port))
        try:
            sample = {
                "9P read": real_seconds(guest.run("time dd if=/mnt/host/big of=/dev/null bs=1M")),
                "9P write": real_seconds(guest.run(
                    f"time dd if=/dev/zero of=/mnt/host/out bs=1M count={size_mib}")),
                "net host->guest": net_seconds(guest, port),
            }
            if with_compute:
                sample["compute, devices attached"] = compute_seconds(guest)
        finally:
            guest.stop()
        for k, v in sample.items():
            results[k] = min(results.get(k, v), v)
    return results


def rootfs_args():
    return ["-drive", f"file={images}/rootfs.ext2,format=raw,if=none,id=hd0,snapshot=on",
            "-device", "virtio-blk-device,drive=hd0"]


def qemu_argv(port):
    return ["qemu-system-riscv32", "-M", "virt", "-m", "256M", "-nographic",
            "-bios", f"{images}/fw_dynamic.bin", "-kernel", f"{images}/Image", *rootfs_args(),
            "-append", "console=ttyS0 root=/dev/vda rw",
            "-fsdev", f"local,id=fs0,path={share},security_model=none",
            "-device", "virtio-9p-device,fsdev=fs0,mount_tag=host",
            "-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:5001",
            "-device", "virtio-net-device,netdev=n0"]


def rv32vm_argv(tier, devices=True):
    def argv(port):
        args = [vm, "--tier", tier, "--memory", "256M"]
        if devices:
            args += ["--share", share, "--net", f"user,hostfwd=tcp:127.0.0.1:{port}-:5001"]
        return args
    return argv


def compute_only(tier):
    best = None
    for _ in range(runs):
        guest = Guest(rv32vm_argv(tier, devices=False)(0))
        try:
            t = compute_seconds(guest)
        finally:
            guest.stop()
        best = t if best is None else min(best, t)
    return best


print(f"bench-host: {size_mib} MiB per transfer, best of {runs} runs; MB/s = 2^20 bytes/s")
table = {"qemu": measure(qemu_argv, False)}
for tier in tiers:
    table[f"rv32vm {tier}"] = measure(rv32vm_argv(tier), True)
    table[f"rv32vm {tier}"]["compute, no devices"] = compute_only(tier)

print(f"{'case':<18} {'qemu':>10} " + " ".join(f"{'rv32vm ' + t:>12} {'ratio':>6}" for t in tiers))
for case in ["9P read", "9P write", "net host->guest"]:
    q = size_mib / table["qemu"][case]
    row = f"{case:<18} {q:>8.1f}MB/s "
    for tier in tiers:
        r = size_mib / table[f"rv32vm {tier}"][case]
        row += f"{r:>10.1f}MB/s {r / q:>6.2f}"
    print(row)
for tier in tiers:
    with_devices = table[f"rv32vm {tier}"]["compute, devices attached"]
    without = table[f"rv32vm {tier}"]["compute, no devices"]
    print(f"compute (40 x cksum-test), rv32vm {tier}: {without:.2f} s without devices, "
          f"{with_devices:.2f} s with --share/--net ({(with_devices / without - 1) * 100:+.1f}%)")
shutil.rmtree(work, ignore_errors=True)
PY
