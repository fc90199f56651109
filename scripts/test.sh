#!/usr/bin/env bash
# The test command: install what the tests need, check formatting and lints, then run every
# test (unit, ISA suites under every tier, user-mode programs and busybox against qemu-riscv32),
# then the interpreter-only build's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all --check
cargo clippy --release --all-targets -- -D warnings
cargo clippy --release -p rv32vm --no-default-features --all-targets -- -D warnings
cargo test --release --workspace
# The interpreter alone (no JIT tiers), as on a host where they cannot be built.
cargo test --release -p rv32vm --no-default-features
