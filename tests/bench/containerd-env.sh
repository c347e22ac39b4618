# shellcheck shell=bash
# Sourced after bench-env.sh: Debian's containerd (1.6, CRI plugin, runc through
# containerd-shim-runc-v2, cgroupfs; the installed package, else that package fetched with apt and
# unpacked under the work dir) on temp dirs under the bench's work dir, with the bench's CNI
# conf dir, the plugins in /usr/lib/cni and the local http registry as a mirror of itself. Its
# clean-up runs before bench-env's (the EXIT trap): containerd and its shims killed, its containers
# deleted from its runc root, the shims' sockets under /run/containerd/s removed; bench-env then
# unmounts what is left under the work dir (overlays, shm, the netns mounts containerd keeps under
# its state dir) and removes the bridge, the iptables rules and the dirs.
ctd_dir="$work/containerd"
ctd_bin=/usr/bin  # where containerd and its shim are (ctd_fetch)
ctd_pid=""
ctd_sock="$ctd_dir/containerd.sock"
ctd_shim_dir=/run/containerd/s
ctd_had_run_dir=$([ -d /run/containerd ] && echo yes || echo no)
ctd_old_shim_sockets=$(ls "$ctd_shim_dir" 2>/dev/null || true)

# The pids of this containerd's shims: containerd-shim-runc-v2 processes started with its address.
ctd_shim_pids() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$ctd_bin/containerd-shim-runc-v2" ] || continue
    tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- "-address $ctd_sock " && echo "${p#/proc/}"
  done
  return 0
}

ctd_cleanup() {
  set +e
  if [ -n "$ctd_pid" ]; then
    kill "$ctd_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$ctd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$ctd_pid" 2>/dev/null
    wait "$ctd_pid" 2>/dev/null
  fi
  local runc_root="$ctd_dir/runc/k8s.io" id p s
  for id in $(runc --root "$runc_root" list -q 2>/dev/null); do runc --root "$runc_root" delete -f "$id"; done
  for p in $(ctd_shim_pids); do kill -9 "$p" 2>/dev/null; done
  for s in "$ctd_shim_dir"/*; do
    [ -e "$s" ] || continue
    grep -qxF "${s##*/}" <<< "$ctd_old_shim_sockets" || rm -f "$s"
  done
  if [ "$ctd_had_run_dir" = no ]; then rmdir "$ctd_shim_dir" /run/containerd 2>/dev/null; fi
  return 0
}

# ctd_fetch: sets ctd_bin. Without the package installed, it is downloaded (apt-get download, the
# index updated when apt has none) and unpacked with dpkg-deb -x under the work dir: nothing is
# installed, so no system containerd service starts, and the clean-up removes it with the work dir.
# Its only dependencies, runc and libc, are berth's too.
ctd_fetch() {
  if [ -x /usr/bin/containerd ] && [ -x /usr/bin/containerd-shim-runc-v2 ]; then return 0; fi
  local deb_dir="$work/containerd-deb"
  mkdir -p "$deb_dir"
  echo "containerd is not installed: fetching Debian's package into $deb_dir (not installing it)"
  if ! (cd "$deb_dir" && { apt-get download containerd > /dev/null 2>&1 || { apt-get update -qq && apt-get download containerd; }; }); then
    echo "could not download Debian's containerd package" >&2
    return 1
  fi
  dpkg-deb -x "$deb_dir"/containerd_*.deb "$deb_dir/root"
  ctd_bin="$deb_dir/root/usr/bin"
}

# ctd_start <sandbox image>: sets ctd_pid; the socket is $ctd_sock. Registries at the hosts in
# $ctd_extra_http_hosts (space-separated host:port) are spoken to over plain http too.
ctd_start() {
  local restrict=false
  # Without CAP_SYS_RESOURCE (bit 24) a container's oom_score_adj cannot go below containerd's own.
  (( (0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 24) & 1 )) || restrict=true
  mkdir -p "$ctd_dir"
  cat > "$ctd_dir/config.toml" <<EOC
version = 2
root = "$ctd_dir/root"
state = "$ctd_dir/state"
temp = "$ctd_dir/tmp"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$ctd_sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$ctd_dir/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$1"
  restrict_oom_score_adj = $restrict
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$work/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$ctd_dir/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."$registry"]
    endpoint = ["http://$registry"]
EOC
  local h
  for h in ${ctd_extra_http_hosts:-}; do
    printf '  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."%s"]\n    endpoint = ["http://%s"]\n' "$h" "$h" \
      >> "$ctd_dir/config.toml"
  done
  mkdir -p "$ctd_dir/tmp"
  ctd_fetch
  # Its shim is looked up in PATH.
  PATH="$ctd_bin:$PATH" "$ctd_bin/containerd" --config "$ctd_dir/config.toml" > "$ctd_dir/containerd.log" 2>&1 &
  ctd_pid=$!
  for _ in $(seq 100); do [ -S "$ctd_sock" ] && break; sleep 0.1; done
  [ -S "$ctd_sock" ] || { echo "containerd did not start:" >&2; tail -20 "$ctd_dir/containerd.log" >&2; return 1; }
}
