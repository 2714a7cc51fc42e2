#!/bin/bash
# The width bench (perf.width) for one or more specc binaries, each run in a fresh
# no-journal ext4 image loop-mounted under target/ (made anew for every run: this VM's disk
# is ext4 without a journal, where an earlier run's cleanup slows the next run's file
# creation for minutes, and a wide build creates hundreds of thousands of files in its
# checkouts), interleaved.
#
#   cargo bench -p specc-tests --bench width --no-run
#   cp target/release/deps/width-<hash> /tmp/width
#   cp target/release/specc /tmp/new        (and an older build as /tmp/old)
#   sudo scripts/bench-width.sh /tmp/width "256,512,64" /tmp/old /tmp/new
#
# Needs root (mount). Prints each run's table under the binary's name.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=$1
jobs=$2
shift 2
img=target/bench-width
mkdir -p "$img/mnt"
cleanup() {
    umount "$img/mnt" 2>/dev/null || true
    rm -rf "$img"
}
trap cleanup EXIT
for j in ${jobs//,/ }; do
    for b in "$@"; do
        rm -f "$img/a.img"
        truncate -s 24G "$img/a.img"
        mkfs.ext4 -q -F -O ^has_journal "$img/a.img"
        mount -o loop "$img/a.img" "$img/mnt"
        echo "== $b, $j jobs"
        SPECC_BENCH_DIR="$img/mnt" SPECC_BENCH_BIN="$b" "$bench" --jobs "$j" | tail -1
        umount "$img/mnt"
    done
done
