#!/usr/bin/env bash
# User-mode compute benchmark: tests/guest/bench.c under qemu-riscv32, natively on the host
# (the same source built for x86-64 with the same compiler and -O2), and under
# `target/release/rv32vm run --tier T` for every tier the binary accepts, in the same run.
# Checks that every run prints the same checksums as qemu, then prints a table of the best
# wall time of N runs, the ratio rv32vm/qemu (lower is better for rv32vm) and the share of
# native speed (native time / rv32vm time; higher is better).
#
# Usage: scripts/bench-user.sh [--runs N] [--scale S] [--tiers "interp t1 t2"] [--sections]
#                                [--warm] [--no-build]
#   --runs N     timed runs per runner, best one counts (default 3)
#   --scale S    work multiplier passed to the benchmark (default 1: a few seconds in qemu)
#   --tiers LIST tiers to try (default: interp t1 t2 auto; tiers the binary rejects are skipped
#                and reported as such)
#   --sections   also time each benchmark section on its own (int vs fp breakdown)
#   --warm       time rv32vm with its code cache filled by an untimed run first (default: no
#                code cache, every region compiled in the run that is timed)
#   --no-build   do not run cargo build --release / build-guest.sh
# Environment: CARGO_TARGET_DIR is honoured for finding the release binary.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=3
scale=1
tiers="interp t1 t2 auto"
build=1
per_section=0
warm=0
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --tiers) tiers="$2"; shift 2 ;;
    --sections) per_section=1; shift ;;
    --no-build) build=0; shift ;;
    --warm) warm=1; shift ;;
    -h | --help) sed -n '2,21p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "bench-user.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done

command -v qemu-riscv32 >/dev/null ||
    { echo "bench-user.sh: qemu-riscv32 missing: apt-get install -y qemu-user" >&2; exit 1; }

target_dir="${CARGO_TARGET_DIR:-$repo/target}"
rv32vm="$target_dir/release/rv32vm"
if [ $build = 1 ]; then
    (cd "$repo" && cargo build --release --quiet)
    "$repo/scripts/build-guest.sh" bench >/dev/null
fi
bench="$repo/target/guest/bench"
[ -x "$bench" ] || { echo "bench-user.sh: $bench missing (scripts/build-guest.sh bench)" >&2; exit 1; }
[ -x "$rv32vm" ] || { echo "bench-user.sh: $rv32vm missing (cargo build --release)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Tier 2's code cache: off, or a fresh one this run fills (--warm).
if [ $warm = 1 ]; then export RV32VM_CODE_CACHE="$work/code-cache"; else export RV32VM_CODE_CACHE=off; fi

# The native reference: same source, same compiler (zig's clang) and flags, for the host.
native="$work/bench-native"
python3 -m ziglang cc -target x86_64-linux-musl -O2 -static -g0 -fno-stack-protector \
    -I "$repo/tests/guest" -o "$native" "$repo/tests/guest/bench.c" -lm ||
    { echo "bench-user.sh: cannot build the native bench (pip install ziglang)" >&2; exit 1; }

# best_time LABEL CMD...: runs CMD $runs times (stdout to $work/LABEL.out), prints the best
# wall time in seconds; fails if a run fails or prints something different from the first.
best_time() {
    local label="$1"
    shift
    local best="" i start end t
    # --warm: one untimed run fills the code cache.
    [ $warm = 1 ] && [ "$1" = "$rv32vm" ] && { "$@" >/dev/null 2>&1 || true; }
    for ((i = 0; i < runs; i++)); do
        start=$(date +%s.%N)
        if ! "$@" >"$work/$label.run" 2>"$work/$label.err"; then
            echo "FAILED: $label: $* (exit status $?)" >&2
            tail -n 5 "$work/$label.err" >&2
            return 1
        fi
        end=$(date +%s.%N)
        t=$(echo "$end - $start" | bc -l)
        if [ $i = 0 ]; then
            cp "$work/$label.run" "$work/$label.out"
        elif ! cmp -s "$work/$label.run" "$work/$label.out"; then
            echo "FAILED: $label: output changed between runs" >&2
            return 1
        fi
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
    done
    printf '%.3f' "$best"
}

echo "rv32vm user-mode compute benchmark (bench.c scale $scale, best of $runs)"
echo "host: $(nproc) cores, $(uname -m), qemu: $(qemu-riscv32 --version | head -n1)"
echo
qemu_time=$(best_time qemu qemu-riscv32 "$bench" "$scale")
echo "checksums (qemu-riscv32):"
sed 's/^/  /' "$work/qemu.out"
echo
native_time=$(best_time native "$native" "$scale")
# Native FP may round differently from RV32 (x87-free SSE, but libm differs): report, do not fail.
cmp -s "$work/native.out" "$work/qemu.out" || echo "(native checksums differ from qemu's in places: libm)"

rows=()
status=0
for tier in $tiers; do
    if ! "$rv32vm" run --tier "$tier" -- "$bench" 1 crc32 >/dev/null 2>"$work/probe.err"; then
        rows+=("$(printf '%-22s %10s %10s  %s' "rv32vm --tier $tier" "-" "-" \
            "not available: $(head -n1 "$work/probe.err" | cut -c1-60)")")
        continue
    fi
    if ! t=$(best_time "$tier" "$rv32vm" run --tier "$tier" -- "$bench" "$scale"); then
        rows+=("$(printf '%-22s %10s %10s  %s' "rv32vm --tier $tier" "-" "-" "run FAILED")")
        status=1
        continue
    fi
    if cmp -s "$work/$tier.out" "$work/qemu.out"; then
        verdict="output identical"
    else
        verdict="OUTPUT DIFFERS from qemu"
        status=1
        diff "$work/qemu.out" "$work/$tier.out" | sed 's/^/    /' >&2 || true
    fi
    ratio=$(echo "$t / $qemu_time" | bc -l)
    share=$(echo "100 * $native_time / $t" | bc -l)
    rows+=("$(printf '%-22s %9.3fs %9.2fx %8.1f%%  %s' "rv32vm --tier $tier" "$t" "$ratio" "$share" "$verdict")")
done

printf '%-22s %10s %10s %9s  %s\n' "runner" "time" "vs qemu" "native" "check"
printf '%-22s %9.3fs %9.2fx %8.1f%%  %s\n' "native x86-64" "$native_time" \
    "$(echo "$native_time / $qemu_time" | bc -l)" 100 "same source, -O2"
printf '%-22s %9.3fs %9.2fx %8.1f%%  %s\n' "qemu-riscv32" "$qemu_time" 1 \
    "$(echo "100 * $native_time / $qemu_time" | bc -l)" "reference"
for row in "${rows[@]}"; do echo "$row"; done

if [ $per_section = 1 ]; then
    echo
    echo "per section (best of $runs, seconds; ratio rv32vm/qemu and share of native speed):"
    available=()
    for tier in $tiers; do
        "$rv32vm" run --tier "$tier" -- "$bench" 1 crc32 >/dev/null 2>&1 && available+=("$tier")
    done
    header=$(printf '%-8s %10s %10s' "section" "native" "qemu")
    for tier in "${available[@]}"; do header+=$(printf ' %28s' "$tier"); done
    echo "$header"
    for section in crc32 muldiv sieve qsort nbody matmul float; do
        q=$(best_time "q-$section" qemu-riscv32 "$bench" "$scale" "$section")
        n=$(best_time "n-$section" "$native" "$scale" "$section")
        line=$(printf '%-8s %9.3fs %9.3fs' "$section" "$n" "$q")
        for tier in "${available[@]}"; do
            if t=$(best_time "$tier-$section" "$rv32vm" run --tier "$tier" -- "$bench" "$scale" "$section"); then
                cmp -s "$work/$tier-$section.out" "$work/q-$section.out" || status=1
                line+=$(printf ' %9.3fs (%5.2fx %5.1f%%)' "$t" "$(echo "$t / $q" | bc -l)" \
                    "$(echo "100 * $n / $t" | bc -l)")
            else
                line+=$(printf ' %28s' FAILED)
                status=1
            fi
        done
        echo "$line"
    done
fi
exit $status
