#!/usr/bin/env bash
# Regenerate tests/guest/fp_vectors.expected: build tests/guest/fp_vectors.c for rv32gc (ilp32d)
# with zig and run it under qemu-riscv32, whose F/D results and fflags are the oracle that
# src/cpu/fpu replays in its unit tests.
#
# Usage: scripts/gen-fp-vectors.sh [--check]
#   --check  compare qemu's output with the checked-in file instead of overwriting it.
# Needs: python3 -m ziglang (pip install ziglang), qemu-riscv32 (apt-get install qemu-user).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_file="$repo_root/tests/guest/fp_vectors.c"
expected_file="$repo_root/tests/guest/fp_vectors.expected"
work_dir="$(mktemp -d)"
trap 'rm -rf "$work_dir"' EXIT

python3 -m ziglang cc -target riscv32-linux-musl -O2 -static -Wall -Wextra -Werror \
    -o "$work_dir/fp_vectors" "$source_file"
qemu-riscv32 "$work_dir/fp_vectors" > "$work_dir/fp_vectors.expected"

lines=$(wc -l < "$work_dir/fp_vectors.expected")
if [[ "$lines" -lt 1000 ]]; then
    echo "error: only $lines vectors produced; refusing to use them" >&2
    exit 1
fi

if [[ "${1:-}" == "--check" ]]; then
    if cmp -s "$work_dir/fp_vectors.expected" "$expected_file"; then
        echo "$expected_file is up to date ($lines vectors)"
    else
        echo "error: $expected_file differs from qemu's output" >&2
        diff "$expected_file" "$work_dir/fp_vectors.expected" | head -20 >&2
        exit 1
    fi
else
    cp "$work_dir/fp_vectors.expected" "$expected_file"
    echo "wrote $expected_file ($lines vectors, $(qemu-riscv32 --version | head -1))"
fi
