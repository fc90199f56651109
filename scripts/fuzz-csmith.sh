#!/usr/bin/env bash
# Differential fuzzing with csmith: generate random C programs, build each as a static
# riscv32-linux-musl executable with zig, run it under qemu-riscv32 (the reference) and under
# `rv32vm run --tier T` for each tier, and compare stdout and exit status exactly.
#
# The optimisation level (-O0/-O1/-O2/-Os) and whether csmith emits float code (--float) are
# chosen from the seed, so a run covers all of them; a seed always gives the same program and
# flags. Seeds that csmith or zig cannot handle, or whose reference run times out (csmith
# programs can loop) or fails, are skipped. One line is printed per seed (ok / skip REASON /
# DIFF TIERS / TIMEOUT TIERS), then a summary; the exit status is 1 if any tier diverged
# (including a tier timing out where qemu finished), else 0.
#
# Usage: scripts/fuzz-csmith.sh [--count N] [--first-seed S] [--tiers "interp t1 t2 auto"]
#                               [--keep DIR] [--jobs N] [--cflags FLAGS] [--ref-cflags FLAGS]
#                               [--opt O] [--float on|off|seed] [--csmith-args ARGS] [--vm PATH]
#                               [--max-time SECONDS]
#   --count N        number of seeds (default 100)
#   --first-seed S   first seed (default 1); seeds S .. S+N-1 are tried
#   --tiers LIST     rv32vm tiers to compare (default: interp t1 t2 auto)
#   --keep DIR       where failing cases are kept, one folder per seed holding the C source,
#                    the binary, the flags and every output (default: target/fuzz-csmith)
#   --jobs N         seeds run at once (default 1)
#   --cflags FLAGS   extra compiler flags, e.g. "-mcpu=generic_rv32+m+a+c" (soft-float) or
#                    "-mcpu=generic_rv32+m+a+f+d+c+zba+zbb+zbs"
#   --ref-cflags F   build a second binary with these extra flags (instead of --cflags) for the
#                    qemu reference run, for extensions the installed qemu lacks (e.g. Zicond
#                    under qemu 7.2): csmith programs are deterministic, so the output must not
#                    depend on the flags
#   --opt O          use this -O level for every seed instead of choosing one from the seed
#   --float MODE     on, off, or seed (default: every third seed uses csmith --float)
#   --csmith-args A  extra csmith arguments (default: none)
#   --vm PATH        the rv32vm binary (default: $CARGO_TARGET_DIR or target/, release/rv32vm)
#   --max-time SEC   start no new seed after SEC seconds of wall time (default: no limit)
# Environment: QEMU_TIMEOUT (default 10 s), VM_TIMEOUT (20 s), T2_TIMEOUT (60 s for t2);
# SLOW_RATIO (default 20): an ok run slower than this many times qemu (and over 1 s) is
# reported as "slow" on the seed's line. ZIG_GLOBAL_CACHE_DIR defaults to target/zig-cache.
# Needs: csmith and its headers (apt-get install csmith libcsmith-dev), zig as
# `python3 -m ziglang` (pip install ziglang), and qemu-riscv32 (apt-get install qemu-user).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
count=100
first_seed=1
tiers="interp t1 t2 auto"
keep="$repo/target/fuzz-csmith"
jobs=1
cflags=""
ref_cflags=""
ref_separate=0
opt=""
float_mode=seed
csmith_args=""
vm="${CARGO_TARGET_DIR:-$repo/target}/release/rv32vm"
max_time=0
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --count) count="$2"; shift 2 ;;
    --first-seed) first_seed="$2"; shift 2 ;;
    --tiers) tiers="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --cflags) cflags="$2"; shift 2 ;;
    --ref-cflags) ref_cflags="$2"; ref_separate=1; shift 2 ;;
    --opt) opt="$2"; shift 2 ;;
    --float) float_mode="$2"; shift 2 ;;
    --csmith-args) csmith_args="$2"; shift 2 ;;
    --vm) vm="$2"; shift 2 ;;
    --max-time) max_time="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "fuzz-csmith.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
case "$float_mode" in on | off | seed) ;; *) echo "fuzz-csmith.sh: --float on|off|seed" >&2; exit 2 ;; esac

missing=0
command -v csmith >/dev/null || { echo "fuzz-csmith.sh: csmith missing: apt-get install csmith libcsmith-dev" >&2; missing=1; }
csmith_inc=""
for d in /usr/include/csmith /usr/local/include/csmith /usr/include/csmith-*; do
    [ -f "$d/csmith.h" ] && { csmith_inc="$d"; break; }
done
[ -n "$csmith_inc" ] || { echo "fuzz-csmith.sh: csmith.h missing: apt-get install libcsmith-dev" >&2; missing=1; }
python3 -m ziglang version >/dev/null 2>&1 || { echo "fuzz-csmith.sh: zig missing: pip install ziglang" >&2; missing=1; }
command -v qemu-riscv32 >/dev/null || { echo "fuzz-csmith.sh: qemu-riscv32 missing: apt-get install qemu-user" >&2; missing=1; }
[ -x "$vm" ] || { echo "fuzz-csmith.sh: no rv32vm binary at $vm (cargo build --release, or --vm PATH)" >&2; missing=1; }
[ "$missing" = 0 ] || exit 1

export ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$repo/target/zig-cache}"
export ZIG_LOCAL_CACHE_DIR="${ZIG_LOCAL_CACHE_DIR:-$ZIG_GLOBAL_CACHE_DIR}"
QEMU_TIMEOUT="${QEMU_TIMEOUT:-10}"
VM_TIMEOUT="${VM_TIMEOUT:-20}"
T2_TIMEOUT="${T2_TIMEOUT:-60}"
SLOW_RATIO="${SLOW_RATIO:-20}"
mkdir -p "$keep"
keep="$(cd "$keep" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/fuzz-csmith.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# csmith --float output assigns between float* and int* at times, an error in recent clang.
base_flags=(-target riscv32-linux-musl -static -g0 -w -fno-stack-protector
    -Wno-error=incompatible-pointer-types -Wno-error=int-conversion -I"$csmith_inc")
opts=(-O0 -O1 -O2 -Os)

# Wall time of a command in milliseconds into $ms, its exit status into $rc.
timed() {
    local t0 t1
    t0=$(date +%s%N)
    set +e
    "$@"
    rc=$?
    set -e
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
}

# Runs one seed; prints its result line "seed S: ..." on stdout.
run_seed() {
    local seed="$1" dir o fl cs prog ref qrc qms t tmo rc ms
    dir="$work/$seed"
    local diffs="" touts="" slow="" line
    mkdir -p "$dir"
    if [ -n "$opt" ]; then o="$opt"; else o="${opts[$((seed % 4))]}"; fi
    case "$float_mode" in
    on) fl=1 ;; off) fl=0 ;; seed) fl=$(((seed / 4) % 3 == 0 ? 1 : 0)) ;;
    esac
    cs=(--seed "$seed" --no-packed-struct)
    [ "$fl" = 1 ] && cs+=(--float)
    # shellcheck disable=SC2206 # a list of arguments on purpose
    [ -n "$csmith_args" ] && cs+=($csmith_args)
    local desc="$o"
    [ "$fl" = 1 ] && desc+=" float"
    desc+="${cflags:+ $cflags}"
    finish() { # $1: the result line; keeps the case if it is a failure
        echo "seed $seed [$desc]: $1"
        case "$1" in
        DIFF* | TIMEOUT* | CRASH*)
            local k="$keep/seed-$seed"
            rm -rf "$k"
            cp -r "$dir" "$k"
            {
                echo "seed: $seed"
                echo "csmith ${cs[*]}"
                echo "cc: python3 -m ziglang cc ${base_flags[*]} $o $cflags prog.c -o prog"
                [ "$ref_separate" = 1 ] && echo "ref cc: ... $o $ref_cflags prog.c -o prog-ref"
                echo "reference: timeout $QEMU_TIMEOUT qemu-riscv32 ${ref##*/} (exit $qrc, ${qms} ms)"
                echo "vm: $vm run --tier T prog"
                echo "result: $1"
            } >"$k/info.txt"
            ;;
        esac
        rm -rf "$dir"
    }
    if ! csmith "${cs[@]}" >"$dir/prog.c" 2>"$dir/csmith.err"; then
        finish "skip csmith failed"; return
    fi
    prog="$dir/prog"
    # shellcheck disable=SC2086 # $cflags is a list of flags on purpose
    if ! python3 -m ziglang cc "${base_flags[@]}" "$o" $cflags "$dir/prog.c" -o "$prog" \
        2>"$dir/cc.err"; then
        finish "skip compile failed ($(head -c 120 "$dir/cc.err" | tr '\n' ' '))"; return
    fi
    ref="$prog"
    if [ "$ref_separate" = 1 ]; then
        ref="$dir/prog-ref"
        # shellcheck disable=SC2086
        if ! python3 -m ziglang cc "${base_flags[@]}" "$o" $ref_cflags "$dir/prog.c" -o "$ref" \
            2>"$dir/cc-ref.err"; then
            finish "skip reference compile failed"; return
        fi
    fi
    timed timeout "$QEMU_TIMEOUT" qemu-riscv32 "$ref" >"$dir/qemu.out" 2>"$dir/qemu.err" </dev/null
    qrc=$rc qms=$ms
    if [ "$qrc" = 124 ]; then finish "skip qemu timeout"; return; fi
    if [ "$qrc" != 0 ]; then finish "skip qemu exit $qrc"; return; fi
    for t in $tiers; do
        tmo="$VM_TIMEOUT"
        [ "$t" = t2 ] && tmo="$T2_TIMEOUT"
        timed timeout "$tmo" "$vm" run --tier "$t" "$prog" >"$dir/$t.out" 2>"$dir/$t.err" </dev/null
        echo "$rc" >"$dir/$t.rc"
        echo "$ms" >"$dir/$t.ms"
        if [ "$rc" = 124 ]; then
            touts+=" $t(${tmo}s vs qemu ${qms}ms)"
        elif [ "$rc" != "$qrc" ] || ! cmp -s "$dir/qemu.out" "$dir/$t.out"; then
            diffs+=" $t(exit $rc)"
        elif [ "$ms" -gt 1000 ] && [ "$ms" -gt $((qms * SLOW_RATIO)) ]; then
            slow+=" $t(${ms}ms vs qemu ${qms}ms)"
        fi
    done
    if [ -n "$diffs" ]; then
        line="DIFF$diffs${touts:+; TIMEOUT$touts}"
    elif [ -n "$touts" ]; then
        line="TIMEOUT$touts"
    else
        line="ok (qemu ${qms}ms)"
    fi
    finish "$line${slow:+; slow$slow}"
}

echo "fuzz-csmith: seeds $first_seed..$((first_seed + count - 1)), tiers: $tiers, jobs $jobs"
echo "  vm: $vm; $(csmith --version | head -n1); zig $(python3 -m ziglang version);" \
    "$(qemu-riscv32 --version | head -n1)"
echo "  cflags: ${cflags:-none}${ref_cflags:+; reference cflags: $ref_cflags}; keep: $keep"
log="$work/results"
: >"$log"
start=$SECONDS
out_of_time() { [ "$max_time" -gt 0 ] && [ $((SECONDS - start)) -ge "$max_time" ]; }
if [ "$jobs" -le 1 ]; then
    for ((s = first_seed; s < first_seed + count; s++)); do
        if out_of_time; then break; fi
        run_seed "$s" | tee -a "$log"
    done
else
    # Seeds in parallel: each job appends its whole line at once.
    running=0
    for ((s = first_seed; s < first_seed + count; s++)); do
        if out_of_time; then break; fi
        (run_seed "$s" | tee -a "$log") &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
    done
    wait
fi

n_seeds=$(wc -l <"$log")
n_ok=$(grep -c ': ok' "$log" || true)
n_skip=$(grep -c ': skip' "$log" || true)
n_diff=$(grep -c ': DIFF' "$log" || true)
n_tout=$(grep -c ': TIMEOUT' "$log" || true)
n_slow=$(grep -c '; slow' "$log" || true)
echo "summary: $n_seeds seeds in $((SECONDS - start)) s: $n_ok ok, $n_diff diverged, $n_tout rv32vm timeouts," \
    "$n_skip skipped ($n_slow ok but slow)"
if [ "$n_skip" -gt 0 ]; then
    echo "  skips: $(sed -n 's/.*: skip \([a-z]* [a-z]*\).*/\1/p' "$log" | sort | uniq -c |
        awk '{printf "%s%s %s %s", sep, $1, $2, $3; sep=", "}')"
fi
if [ "$n_diff" -gt 0 ] || [ "$n_tout" -gt 0 ]; then
    echo "failing cases kept in $keep:"
    grep -E ': (DIFF|TIMEOUT)' "$log" | sed 's/^/  /'
    exit 1
fi
exit 0
