#!/usr/bin/env bash
# Measures the stats rpcs on a berthd over temp dirs, from the project's busybox image on a local
# registry: ListContainerStats, ListPodSandboxStats and ListPodSandboxMetrics with 100 running
# containers in 10 pods on a bridge network (median of 50 calls), or <pods> pods of <containers>
# each (110 1: kubelet's pod limit). Prints, asserts nothing; everything it creates is removed
# afterwards. Usage: tests/bench/stats-bench.sh <build dir> [pods containers]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
source "$(dirname "$0")/bench-env.sh"
bench_registry --only busybox
bench_network
bench_berthd "$build"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 1000 --runtime-pid "$berthd" \
  --stats "$registry/test/busybox:latest" --stats-pods "${2:-10}" --stats-containers "${3:-10}"
