#!/usr/bin/env bash
# CheckpointContainer and restore of a container holding 100 MiB of touched memory (berth-bench
# --checkpoint-dir): checkpoint time, archive size, CreateContainer + StartContainer of the restore.
# CRIU works only where `criu check` passes: on these machines, in the guest of tests/vm, run as
#   tests/vm/cgroup2-vm /tmp/vm tests/bench/checkpoint-bench.sh <build dir> [MiB] [runs]
# The guest is emulated: a fixed CPU probe (sha256 of 256 MiB of zeros) is timed first, so that
# running `tests/bench/checkpoint-bench.sh --cpu-probe` on the host gives the emulation factor.
set -euo pipefail
cpu_probe() {
  local t0 t1
  t0=$(date +%s%N)
  head -c $((256 << 20)) /dev/zero | sha256sum > /dev/null
  t1=$(date +%s%N)
  echo "cpu_probe_ms $(((t1 - t0) / 1000000))"
}
if [ "${1:-}" = "--cpu-probe" ]; then cpu_probe; exit 0; fi
build=$(cd "${1:?build dir}" && pwd)
mib=${2:-100}
runs=${3:-3}
source "$(dirname "$0")/bench-env.sh"
cpu_probe
bench_registry --only busybox
bench_network
bench_berthd "$build"
mkdir -p "$work/checkpoints/logs"
"$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 3 --runtime-pid "$berthd" \
  --pod-image "$registry/test/busybox:latest" --checkpoint-dir "$work/checkpoints" --checkpoint-mib "$mib" \
  --checkpoint-runs "$runs" | sed -n '/checkpoint\/restore/,$p'
