#!/usr/bin/env bash
# Compare rv32vm's user mode with qemu-riscv32 on Linux's own selftests (not a CI test: a
# check for programs we did not write). Builds a list of single-file selftests from Debian's
# linux-source package for riscv32-linux-musl, runs each under qemu-riscv32 and under
# `rv32vm run --tier T` for each tier, and compares the exit status and the TAP result lines.
# A DIFF is not always rv32vm's fault: read both outputs (in the work directory printed) and
# decide by what Linux does.
#
# Usage: scripts/compare-kselftests.sh [--tiers "interp auto"] [--keep]
# Needs: linux-source-6.12 (apt), zig (python3 -m ziglang), qemu-user.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tiers="interp auto"
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --tiers) tiers="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,10p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare-kselftests.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || { echo "compare-kselftests.sh: $tarball missing (apt-get install linux-source-6.12)" >&2; exit 1; }
command -v qemu-riscv32 >/dev/null || { echo "compare-kselftests.sh: qemu-riscv32 missing" >&2; exit 1; }
vm="${CARGO_TARGET_DIR:-$repo/target}/release/rv32vm"
[ -x "$vm" ] || { echo "compare-kselftests.sh: $vm missing (cargo build --release)" >&2; exit 1; }

work="$(mktemp -d)"
[ $keep = 1 ] || trap 'rm -rf "$work"' EXIT
tar -xf "$tarball" -C "$work" linux-source-6.12/tools
st="$work/linux-source-6.12/tools/testing/selftests"
mkdir -p "$work/bin" "$work/out"

# name:source[:extra sources and flags]
tests=(
    timers_nanosleep:timers/nanosleep.c
    futex_wait:futex/functional/futex_wait.c:-I$st/futex/include
    futex_wait_wouldblock:futex/functional/futex_wait_wouldblock.c:-I$st/futex/include
    futex_requeue:futex/functional/futex_requeue.c:-I$st/futex/include
    futex_wait_uninitialized_heap:futex/functional/futex_wait_uninitialized_heap.c:-I$st/futex/include
    futex_wait_private_mapped_file:futex/functional/futex_wait_private_mapped_file.c:-I$st/futex/include
    mincore:mincore/mincore_selftest.c
    kcmp:kcmp/kcmp_test.c
    close_range:core/close_range_test.c:-D__NR_close_range=436
    execveat:exec/execveat.c
    recursion_depth:exec/recursion-depth.c
    openat2:openat2/openat2_test.c:$st/openat2/helpers.c
    resolve:openat2/resolve_test.c:$st/openat2/helpers.c
    clone3:clone3/clone3.c
    proc_fd_001:proc/fd-001-lookup.c
    proc_fd_002:proc/fd-002-posix-eq.c
    proc_self:proc/self.c
    proc_thread_self:proc/thread-self.c
    proc_uptime:proc/proc-uptime-001.c
    proc_map_files_002:proc/proc-self-map-files-002.c
    proc_tid0:proc/proc-tid0.c
    pidfd_open:pidfd/pidfd_open_test.c:-I$st/pidfd
    pidfd_poll:pidfd/pidfd_poll_test.c:-I$st/pidfd
    prctl_name:prctl/set-process-name.c
    eventfd:filesystems/eventfd/eventfd_test.c
    epoll_wakeup:filesystems/epoll/epoll_wakeup_test.c
    "map_fixed_noreplace:mm/map_fixed_noreplace.c:-I$st/mm $st/mm/vm_util.c"
)
for entry in "${tests[@]}"; do
    IFS=: read -r name source extra <<<"$entry"
    # shellcheck disable=SC2086 # $extra is a list of flags and files
    if ! python3 -m ziglang cc -target riscv32-linux-musl -O2 -static -D_GNU_SOURCE \
        -include libgen.h -I"$st" "$st/$source" $extra -o "$work/bin/$name" -lpthread -lrt \
        2>"$work/out/$name.build"; then
        echo "not built: $name (see $work/out/$name.build)"
        continue
    fi
done

results() { grep -aE "^(ok|not ok) |^status=" "$1" || true; }
status=0
for bin in "$work"/bin/*; do
    name=$(basename "$bin")
    # run OUT CMD...: CMD's output and exit status in OUT (run in $work: tests make files).
    run() {
        local out="$1" code=0
        shift
        (cd "$work" && timeout 120 "$@") >"$out" 2>&1 || code=$?
        echo "status=$code" >>"$out"
    }
    run "$work/out/$name.qemu" qemu-riscv32 "$bin"
    for tier in $tiers; do
        run "$work/out/$name.$tier" "$vm" run --tier "$tier" "$bin"
        if diff <(results "$work/out/$name.qemu") <(results "$work/out/$name.$tier") >/dev/null; then
            printf 'same  %-30s %s\n' "$name" "$tier"
        else
            printf 'DIFF  %-30s %s\n' "$name" "$tier"
            status=1
        fi
    done
done
[ $keep = 1 ] && echo "outputs in $work/out"
exit $status
