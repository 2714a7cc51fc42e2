#!/bin/bash
# Interleaved runs of scheduler bench binaries (perf.orchestration) in three places: tmpfs,
# a fresh no-journal ext4 image loop-mounted under target/ (made anew for every run: this
# VM's disk is ext4 without a journal, where a run's cleanup slows the next runs' file
# creation for minutes), and the bench's own directory under target/.
#
#   cargo bench -p specc-tests --bench scheduler --no-run
#   cp target/release/deps/scheduler-<hash> /tmp/new     (and an older build as /tmp/old)
#   sudo scripts/bench-scheduler-places.sh 3 /tmp/old /tmp/new
#
# Needs root (mount). Prints one line per run: place, binary, the bench's 10,000-leaf row.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=$1
shift
img=target/bench-places
shm=/dev/shm/specc-bench-places
mkdir -p "$img/mnt" target/bench-places-dir "$shm"
cleanup() {
    umount "$img/mnt" 2>/dev/null || true
    rm -rf "$img" target/bench-places-dir "$shm"
}
trap cleanup EXIT
run() { # place dir binary
    echo "$1 $3 $(SPECC_BENCH_DIR="$2" "$3" --bench 10000 | tail -1)"
}
for _ in $(seq 1 "$rounds"); do
    for b in "$@"; do
        rm -rf "${shm:?}"/*
        run tmpfs "$shm" "$b"
    done
    for b in "$@"; do
        rm -f "$img/a.img"
        truncate -s 4G "$img/a.img"
        mkfs.ext4 -q -F -O ^has_journal "$img/a.img"
        mount -o loop "$img/a.img" "$img/mnt"
        run image "$img/mnt" "$b"
        umount "$img/mnt"
    done
    for b in "$@"; do
        rm -rf target/bench-places-dir/*
        sync
        run disk target/bench-places-dir "$b"
    done
done
