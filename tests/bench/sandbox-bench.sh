#!/usr/bin/env bash
# Measures RunPodSandbox (no CNI) on a berthd over temp dirs: 20 sequential (p50/p95), 10 in
# parallel (wall time), berthd's RSS idle and with 30 sandboxes, and each pause's RSS. Everything it
# creates is removed afterwards. Usage: tests/bench/sandbox-bench.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
work=$(mktemp -d /tmp/berth-sandbox-bench.XXXXXX)
berthd=""
cleanup() {
  if [ -n "$berthd" ]; then kill "$berthd" 2>/dev/null || true; wait "$berthd" 2>/dev/null || true; fi
  for id in $(runc --root "$work/state/runtime/runc" list -q 2>/dev/null); do runc --root "$work/state/runtime/runc" delete -f "$id"; done
  for m in $(grep -o "$work/[^ ]*" /proc/self/mountinfo | sort -r); do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
  for c in /sys/fs/cgroup/*/berth-bench; do rmdir "$c" 2>/dev/null || true; done
}
trap cleanup EXIT
"$build/server/berthd" --socket "$work/berth.sock" --root "$work/root" --state "$work/state" > "$work/berthd.log" 2>&1 &
berthd=$!
for _ in $(seq 100); do [ -S "$work/berth.sock" ] && break; sleep 0.1; done
sleep 1  # let berthd settle before its idle RSS is read
"$build/tests/bench/berth-bench" --endpoint "unix://$work/berth.sock" --calls 1000 --sandboxes --runtime-pid "$berthd"
