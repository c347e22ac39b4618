#!/usr/bin/env bash
# Measures Exec (`true`, round trip through the rpc and the streaming server) and port-forward
# throughput (256 MiB each way) into a pod on a berthd over temp dirs, with the project's busybox
# image from a local registry. Everything it creates is removed afterwards.
# Usage: tests/bench/streaming-rpc-bench.sh <build dir> [MiB]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
mib=${2:-256}
source "$(dirname "$0")/bench-env.sh"
bench_registry --only busybox
bench_network
bench_berthd "$build"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 100 --streaming "$registry/test/busybox:latest" \
  --streaming-mib "$mib"
