#!/usr/bin/env bash
# Measures containers on a berthd over temp dirs, from the project's busybox image on a local
# registry: CreateContainer + StartContainer (20), ListContainers and ListPodSandbox with 100
# containers, berth-monitor RSS per container and berthd's RSS with 100 containers. Everything it
# creates is removed afterwards. Usage: tests/bench/container-bench.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
source "$(dirname "$0")/bench-env.sh"
bench_registry --only busybox
bench_network
bench_berthd "$build"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 1000 --runtime-pid "$berthd" \
  --containers "$registry/test/busybox:latest"
