#!/usr/bin/env bash
# PullImage on berth next to Debian's containerd, in one run, from the same local registry on
# 127.0.0.1: the small busybox image (cold store, the median of <runs>, pull + status + remove as
# critest's image benchmark does) and the bench's big image (<MiB> of random data in 4 layers over
# busybox's, the median of 3). berth-bench measures both endpoints the same way and prints each
# figure with the ratio berth/containerd. Prints figures, asserts nothing; everything it made is
# removed on exit. Usage: tests/bench/pull-side-by-side.sh <build dir> [runs (20)] [big MiB (200)]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
runs=${2:-20}
mib=${3:-200}
source "$(dirname "$0")/bench-env.sh"
source "$(dirname "$0")/containerd-env.sh"
trap 'ctd_cleanup; bench_cleanup' EXIT

bench_registry --pause-binary "$build/server/berth-pause"
"$(dirname "$0")/../registry/build-test-images.py" "http://$registry" --only big --big "$mib" > /dev/null
bench_network
bench_berthd "$build"
ctd_start "$registry/test/pause:v1"

declare -A median
for rt in containerd berth; do
  for image in test/busybox:latest test/big:v1; do
    n=$runs
    [ "$image" = test/big:v1 ] && n=3
    out=$("$build/tests/bench/berth-bench" --endpoint "${endpoint[$rt]}" --calls 1 --pull "$registry/$image" \
      --pull-runs "$n")
    echo "== $rt $image"
    echo "$out" | grep -v '^figure'
    median[$rt.$image]=$(echo "$out" | awk -F'|' '/PullImage, cold store/ { gsub(/ /, "", $4); print $4 }')
  done
done
for image in test/busybox:latest test/big:v1; do
  printf '%-22s containerd %8s ms   berth %8s ms   ratio %s\n' "$image" "${median[containerd.$image]}" \
    "${median[berth.$image]}" "$(awk -v a="${median[berth.$image]}" -v b="${median[containerd.$image]}" \
      'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')"
done
