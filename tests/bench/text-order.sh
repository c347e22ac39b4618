#!/usr/bin/env bash
# Regenerates server/berthd-text-order.ld, the order berthd's code is laid out in (README
# "Memory"). It runs berthd through a node's day (start, pulls of the test images and a re-pull,
# pods run, exec'd, listed, probed and stat'd as kubelet does, streaming exec and port-forward,
# /metrics, a config reload) with the binary on a scratch ext4 (loop device) whose readahead is
# off and out of the page cache, so that the only pages of its code in its page tables are the
# ones it touched, and linked with a page per function (-DBERTH_TEXT_PROFILE=ON), so that each of
# those pages names the code that ran; tests/bench/text_order.py turns them into the linker
# script. Needs root and a build dir configured with -DBERTH_TEXT_PROFILE=ON (configure it back to
# OFF to build a berthd that uses the new order); everything it makes is removed on exit.
#   tests/bench/text-order.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -f "$build/server/berthd.map" ] || ! readelf -SW "$build/server/berthd" | grep -q '\.text\.berth_profile'; then
  echo "text-order: configure $build with -DBERTH_TEXT_PROFILE=ON and build berthd" >&2
  exit 2
fi
source "$(dirname "$0")/bench-env.sh"
scratch=$(mktemp -d /tmp/berth-text-order.XXXXXX)
loop=""
order_cleanup() {
  set +e
  bench_cleanup
  mountpoint -q "$scratch/fs" && umount "$scratch/fs"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$scratch"
  return 0
}
trap order_cleanup EXIT

truncate -s 512M "$scratch/fs.img"
mkfs.ext4 -q "$scratch/fs.img"
loop=$(losetup --find --show "$scratch/fs.img")
echo 0 > "/sys/block/$(basename "$loop")/queue/read_ahead_kb"
mkdir -p "$scratch/fs"
mount "$loop" "$scratch/fs"
# A build dir as bench_berthd wants it: berthd copied onto the scratch fs, the rest linked.
run_dir="$scratch/fs/build"
mkdir -p "$run_dir/server" "$run_dir/tests/bench"
for f in "$build"/server/berth-*; do ln -s "$f" "$run_dir/server/"; done
ln -s "$build/tests/bench/berth-bench" "$run_dir/tests/bench/berth-bench"

bench_registry --pause-binary "$build/server/berth-pause"
bench_network
image="$registry/test/busybox:latest"
pulls=()
for i in test/busybox:latest test/busybox:other test/layered:v1 test/multi:v1 test/dlist:v1 test/hostile-etc:fifo \
         test/hostile-etc:links test/pause:v1; do pulls+=(--pull-stored "$registry/$i"); done

cp "$build/server/berthd" "$run_dir/server/berthd.new"
mv "$run_dir/server/berthd.new" "$run_dir/server/berthd"
sync
# Out of the page cache: what berthd maps from here on it faulted in itself, page by page.
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' \
  "$run_dir/server/berthd"
bench_berthd "$run_dir"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --runtime-pid "$berthd" --calls 50 --sandboxes \
  --metrics-url "http://127.0.0.1:$metrics_port/metrics" "${pulls[@]}" --pull-runs 1 --pod-image "$image" \
  --lifecycle --lifecycle-pods 3 --steady-state --steady-pods 10 --duration 21 --streaming "$image" --streaming-mib 8 \
  > "$work/bench.out" 2>&1 || { cat "$work/bench.out" >&2; exit 1; }
curl -sf "http://127.0.0.1:$metrics_port/metrics" > /dev/null
kill -HUP "$berthd"
sleep 1
python3 "$src/tests/bench/text_order.py" --map "$build/server/berthd.map" --pid "$berthd" \
  > "$src/server/berthd-text-order.ld.new"
mv "$src/server/berthd-text-order.ld.new" "$src/server/berthd-text-order.ld"
kill "$berthd"
wait "$berthd" || true
berthd=""
echo "text-order: server/berthd-text-order.ld rewritten"
