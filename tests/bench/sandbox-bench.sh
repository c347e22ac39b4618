#!/usr/bin/env bash
# Measures RunPodSandbox on a berthd over temp dirs: with a real bridge pod network (bridge +
# host-local + portmap on a bridge and subnet made for the run) and on the host network (no netns,
# no CNI): 20 sequential (p50/p95), 10 in parallel (wall time), the share spent in CNI plugin
# execs (from berthd's /metrics), berthd's RSS idle and with 30 sandboxes, and each pause's RSS.
# Everything it creates is removed afterwards. Usage: tests/bench/sandbox-bench.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
work=$(mktemp -d /tmp/berth-sandbox-bench.XXXXXX)
bridge=bbench$$
berthd=""
cleanup() {
  if [ -n "$berthd" ]; then kill "$berthd" 2>/dev/null || true; wait "$berthd" 2>/dev/null || true; fi
  for id in $(runc --root "$work/state/runtime/runc" list -q 2>/dev/null); do runc --root "$work/state/runtime/runc" delete -f "$id"; done
  for m in $(grep -o "$work/[^ ]*" /proc/self/mountinfo | sort -r); do umount -l "$m" 2>/dev/null || true; done
  iptables-save -t nat | grep -- "-A .*berth-bench-net" | sed 's/^-A //' | while read -r rule; do eval "iptables -w -t nat -D $rule" || true; done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$work"
  for c in /sys/fs/cgroup/*/berth-bench; do rmdir "$c" 2>/dev/null || true; done
}
trap cleanup EXIT
subnet=""
for third in $(seq 0 255); do
  if ! ip -o -4 addr show | grep -q " 10.199.$third\."; then subnet="10.199.$third.0/24"; break; fi
done
mkdir -p "$work/net.d" "$work/ipam"
cat > "$work/net.d/10-bench.conflist" <<EOC
{"cniVersion": "1.0.0", "name": "berth-bench-net", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$work/ipam", "routes": [{"dst": "0.0.0.0/0"}], "ranges": [[{"subnet": "$subnet"}]]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOC
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'cni_conf_dir = "%s/net.d"\nmetrics_address = "127.0.0.1:%s"\n' "$work" "$port" > "$work/berth.toml"
"$build/server/berthd" --config "$work/berth.toml" --socket "$work/berth.sock" --root "$work/root" --state "$work/state" > "$work/berthd.log" 2>&1 &
berthd=$!
for _ in $(seq 100); do [ -S "$work/berth.sock" ] && break; sleep 0.1; done
sleep 1  # let berthd settle before its idle RSS is read
echo "== pod network (bridge + host-local + portmap, $subnet)"
"$build/tests/bench/berth-bench" --endpoint "unix://$work/berth.sock" --calls 1000 --sandboxes --runtime-pid "$berthd" \
  --metrics-url "http://127.0.0.1:$port/metrics"
echo
echo "== host network (no netns, no CNI)"
"$build/tests/bench/berth-bench" --endpoint "unix://$work/berth.sock" --calls 10 --sandboxes --host-network --runtime-pid "$berthd"
