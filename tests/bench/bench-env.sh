# Sourced by the bench scripts: a temp work dir, a local docker-registry with the project's test
# images, a bridge pod network of the bench's own and a berthd on the work dir; everything is
# removed on exit (the EXIT trap), whatever happened. Needs root, as berthd does.
bench_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d /tmp/berth-bench.XXXXXX)
bridge=bbench$$
berthd=""
bench_pids=()

bench_cleanup() {
  # Every step runs whatever the one before did: under the scripts' `set -e`, the first command
  # that fails (the grep below finds no portmap rule when no pod mapped a port) would end the trap
  # and leave the bridge, the work dir and the cgroups behind.
  set +e
  if [ -n "$berthd" ]; then kill "$berthd" 2>/dev/null || true; wait "$berthd" 2>/dev/null || true; fi
  for id in $(runc --root "$work/state/runtime/runc" list -q 2>/dev/null); do runc --root "$work/state/runtime/runc" delete -f "$id"; done
  for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for m in $(grep -o "$work/[^ ]*" /proc/self/mountinfo | sort -r); do umount -l "$m" 2>/dev/null || true; done
  iptables-save -t nat | grep -- "-A .*berth-bench-net" | sed 's/^-A //' | while read -r rule; do eval "iptables -w -t nat -D $rule" || true; done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$work"
  bench_remove_cgroups
}

# Pods a bench could not remove (its berthd died or stopped answering) keep running, as pods do
# when a runtime goes: their pauses, which berth starts without the runtime, are killed through
# the bench's cgroups, and then the cgroups go, deepest first.
bench_remove_cgroups() {
  local c
  for c in /sys/fs/cgroup/*/berth-bench; do
    [ -d "$c" ] || continue
    find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -9 2>/dev/null
  done
  for _ in $(seq 50); do
    find /sys/fs/cgroup/*/berth-bench -depth -type d -exec rmdir {} + 2>/dev/null
    ls -d /sys/fs/cgroup/*/berth-bench > /dev/null 2>&1 || break
    sleep 0.1
  done
  return 0
}
trap bench_cleanup EXIT

bench_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# bench_registry [build-test-images.py args...]: sets registry (host:port).
bench_registry() {
  local port
  port=$(bench_free_port)
  printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s/storage\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%s\n' "$work" "$port" > "$work/registry.yml"
  /usr/bin/docker-registry serve "$work/registry.yml" > "$work/registry.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$bench_src/tests/registry/build-test-images.py" "http://127.0.0.1:$port" "$@" > /dev/null
  registry="127.0.0.1:$port"
}

# bench_network [22]: a conflist (bridge + host-local + portmap) on a /24 (or a /22, for more than
# 250 pods) no host address uses.
bench_network() {
  local subnet="" third step=1 prefix=${1:-24} k used
  [ "$prefix" = 22 ] && step=4
  for third in $(seq 0 "$step" 255); do
    used=""
    for k in $(seq "$third" $((third + step - 1))); do
      ip -o -4 addr show | grep -q " 10.199.$k\." && used=1
    done
    if [ -z "$used" ]; then subnet="10.199.$third.0/$prefix"; break; fi
  done
  mkdir -p "$work/net.d" "$work/ipam"
  cat > "$work/net.d/10-bench.conflist" <<EOC
{"cniVersion": "1.0.0", "name": "berth-bench-net", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$work/ipam", "routes": [{"dst": "0.0.0.0/0"}], "ranges": [[{"subnet": "$subnet"}]]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOC
  bench_subnet=$subnet
}

# bench_berthd <build dir> [toml lines]: sets berthd (pid), sock and metrics_port.
bench_berthd() {
  local build=$1
  shift
  metrics_port=$(bench_free_port)
  { printf 'cni_conf_dir = "%s/net.d"\nmetrics_address = "127.0.0.1:%s"\n' "$work" "$metrics_port"; printf '%s\n' "$@"; } > "$work/berth.toml"
  "$build/server/berthd" --config "$work/berth.toml" --socket "$work/berth.sock" --root "$work/root" --state "$work/state" \
    > "$work/berthd.log" 2>&1 &
  berthd=$!
  sock="$work/berth.sock"
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  sleep 1  # let berthd settle before its idle RSS is read
}
