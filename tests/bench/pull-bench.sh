#!/usr/bin/env bash
# Measures PullImage of a ~100 MB multi-layer image from a local registry (median of 5, cold store)
# and berthd's peak RSS during the pull. Everything runs on temp dirs and 127.0.0.1, and is
# removed afterwards. Usage: tests/bench/pull-bench.sh <build dir> [MiB]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
mib=${2:-100}
source "$(dirname "$0")/bench-env.sh"
bench_registry --only big --big "$mib"
bench_network
bench_berthd "$build"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 100 \
  --pull "$registry/test/big:v1" --pull-runs 5 --runtime-pid "$berthd"
