#!/usr/bin/env bash
# Measures what a user namespace of its own adds to a pod's life: 20 pods one after another, each
# followed by one with a user namespace (id-mapped image layers, the pin, runc joining it), on a
# berthd over temp dirs with the project's busybox image from a local registry; p50/p95 of every
# rpc for both kinds side by side. Everything it creates is removed afterwards.
# Usage: tests/bench/userns-bench.sh <build dir> [pods]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
pods=${2:-20}
source "$(dirname "$0")/bench-env.sh"
# The pods' roots (unprivileged on the node) reach their rootfs through the work dir, as through /run.
chmod 0711 "$work"
bench_registry --only busybox
bench_network
bench_berthd "$build"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 10 --runtime-pid "$berthd" \
  --pod-image "$registry/test/busybox:latest" --lifecycle --lifecycle-pods "$pods" --lifecycle-userns $((65536 * 400))
