#!/usr/bin/env bash
# Measures RunPodSandbox on a berthd over temp dirs: with a real bridge pod network (bridge +
# host-local + portmap on a bridge and subnet made for the run) and on the host network (no netns,
# no CNI): 20 sequential (p50/p95), 10 in parallel (wall time), the share spent in CNI plugin
# execs (from berthd's /metrics), berthd's RSS idle and with 30 sandboxes, and each pause's RSS.
# Everything it creates is removed afterwards. Usage: tests/bench/sandbox-bench.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
source "$(dirname "$0")/bench-env.sh"
bench_network
bench_berthd "$build"
echo "== pod network (bridge + host-local + portmap, $bench_subnet)"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 1000 --sandboxes --runtime-pid "$berthd" \
  --metrics-url "http://127.0.0.1:$metrics_port/metrics"
echo
echo "== host network (no netns, no CNI)"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 10 --sandboxes --host-network --runtime-pid "$berthd"
