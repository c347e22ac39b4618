#!/usr/bin/env bash
# A node at its limits: for each pod count (SCALE_PODS, default "110 250 500 1000"), that many pods
# (pause + a sleeping container) started at a concurrency of 20, kubelet's steady-state calls on
# them for 60 s (SCALE_SECONDS), then all removed: start time, p50/p99 per call, runtime CPU and
# RSS (daemon + monitors) and per pod, removal time; after each, the runtime must hold nothing
# (runc's list, berthd's netns pins, the bench's cgroups). Then, with the largest count running,
# berthd is killed (-9) and started again: time until it serves and until every pod and container
# is back. Prints figures, asserts nothing but the leftovers. Usage: scale-bench.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
source "$(dirname "$0")/bench-env.sh"
counts=${SCALE_PODS:-110 250 500 1000}
seconds=${SCALE_SECONDS:-60}
bench_registry --only busybox
bench_network 22
bench_berthd "$build"
bench=("$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 10 --pod-image "$registry/test/busybox:latest"
  --concurrency 20 --helper-exe berth-monitor --helper-marker "$work")
leftovers() {
  local n
  n=$(runc --root "$work/state/runtime/runc" list -q 2>/dev/null | wc -l)
  n=$((n + $(ls "$work/state/netns" 2>/dev/null | wc -l)))
  n=$((n + $(find /sys/fs/cgroup/*/berth-bench -mindepth 1 -type d 2>/dev/null | wc -l)))
  echo "$n"
}
largest=0
for n in $counts; do
  echo "== $n pods (concurrency 20, $seconds s of kubelet's calls)"
  "${bench[@]}" --runtime-pid "$berthd" --steady-state --steady-pods "$n" --duration "$seconds"
  left=$(leftovers)
  echo "left behind after $n pods: $left"
  [ "$left" = 0 ] || { echo "scale-bench: $left things left after removal" >&2; exit 1; }
  largest=$n
done
echo "== berthd killed (-9) and started again with $largest pods running"
"${bench[@]}" --runtime-pid "$berthd" --steady-state --steady-pods "$largest" --duration 5 --keep-pods > /dev/null
kill -9 "$berthd"
wait "$berthd" 2>/dev/null || true
"$build/server/berthd" --config "$work/berth.toml" --socket "$sock" --root "$work/root" --state "$work/state" \
  >> "$work/berthd.log" 2>&1 &
berthd=$!
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --wait-recovered "$largest"
"${bench[@]}" --remove-all
left=$(leftovers)
echo "left behind after the restart's pods: $left"
[ "$left" = 0 ] || { echo "scale-bench: $left things left after removal" >&2; exit 1; }
