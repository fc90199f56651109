#!/usr/bin/env bash
# Install what building and testing rv32vm needs on Debian (bookworm or later): LLVM 22 for tier 2
# (llvm-22-dev, from bookworm-security: the build links tier 2's own library from its static
# libraries, opened at run time; libLLVM.so is the fallback), the RISC-V cross compiler for ISA
# tests, QEMU as the reference (qemu-riscv32, qemu-system-riscv32), libslirp (user-mode
# networking for --net; its pkg-config file needs glib's), gdb-multiarch (the GDB stub's
# tests), and zig (from PyPI) as the
# riscv32-linux-musl C compiler for guest programs. Idempotent; safe to re-run.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

apt_packages=(gcc-riscv64-linux-gnu binutils-riscv64-linux-gnu qemu-user qemu-system-misc
              python3-pip build-essential cmake bzip2 xz-utils dpkg-dev e2fsprogs tmux
              llvm-22-dev libslirp-dev libglib2.0-dev pkg-config gdb-multiarch)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! python3 -m ziglang version >/dev/null 2>&1; then
    echo "setup: installing zig (PyPI package ziglang)"
    python3 -m pip install -q ziglang || python3 -m pip install -q --break-system-packages ziglang
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found: install Rust (rustup) first" >&2
    exit 1
fi
