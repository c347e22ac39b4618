#!/usr/bin/env bash
# Measures PullImage of a ~100 MB multi-layer image from a local registry (median of 5, cold store)
# and berthd's peak RSS during the pull. Everything runs on temp dirs and 127.0.0.1, and is
# removed afterwards. Usage: tests/bench/pull-bench.sh <build dir> [MiB]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
mib=${2:-100}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/berth-pull-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s/storage\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%s\n' "$work" "$port" > "$work/registry.yml"
/usr/bin/docker-registry serve "$work/registry.yml" > "$work/registry.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
"$src/tests/registry/build-test-images.py" "http://127.0.0.1:$port" --only big --big "$mib" > /dev/null
"$build/server/berthd" --socket "$work/berth.sock" --root "$work/root" --state "$work/state" > "$work/berthd.log" 2>&1 & pids+=($!)
berthd=$!
for _ in $(seq 100); do [ -S "$work/berth.sock" ] && break; sleep 0.1; done
"$build/tests/bench/berth-bench" --endpoint "unix://$work/berth.sock" --calls 100 \
  --pull "127.0.0.1:$port/test/big:v1" --pull-runs 5 --runtime-pid "$berthd"
