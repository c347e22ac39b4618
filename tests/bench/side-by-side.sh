#!/usr/bin/env bash
# berth next to Debian's containerd (1.6) on one machine, in one run: both daemons on temp dirs,
# the same runc, the same CNI bridge conflist (bridge + host-local + portmap from /usr/lib/cni),
# the same local registry on 127.0.0.1 (the project's test images; containerd's sandbox_image is
# test/pause:v1, holding berth-pause). The same berth-bench program measures each endpoint, phase
# by phase (containerd, then berth):
#   1. daemon RSS idle, before any pull; then after pulling the 8 test images and re-pulling one
#   2. a pod's life rpc by rpc (--lifecycle, 20 pods one after another), memory per pod
#   3. kubelet's steady state (--steady-state) on <steady pods> pods for <seconds>
#   4. density (--density) of <density pods> pods started at a concurrency of 10
# and at the end prints both columns and the ratio berth/containerd. "Runtime" memory and CPU are
# the daemon plus its helpers: containerd-shim-runc-v2 processes started with this containerd's
# address, and berth's helper executables (every berth-* built next to berthd but berth-pause,
# the pods' own process on both sides) whose command line names berth's work dir. Prints figures,
# asserts nothing; everything it made is removed on exit, whatever happened.
# Usage: tests/bench/side-by-side.sh <build dir> [steady pods (110)] [seconds (60)] [density pods (250)]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
steady_pods=${2:-110}
seconds=${3:-60}
density_pods=${4:-250}
source "$(dirname "$0")/bench-env.sh"
source "$(dirname "$0")/containerd-env.sh"
client=""  # the berth-bench running, if any
# This script's pods' cgroups (/berth-bench/<life|steady|density>-<i>/...) nest deeper than
# bench-env removes; rmdir only takes empty ones.
side_cleanup() {
  set +e  # every step runs, whatever the one before did
  if [ -n "$client" ]; then kill "$client" 2>/dev/null; wait "$client" 2>/dev/null; fi
  ctd_cleanup
  bench_cleanup
  find /sys/fs/cgroup/*/berth-bench/{life,steady,density}-* -depth -type d -exec rmdir {} \; 2>/dev/null
  rmdir /sys/fs/cgroup/*/berth-bench 2>/dev/null
  return 0
}
trap side_cleanup EXIT

bench_registry --pause-binary "$build/server/berth-pause"
bench_network
bench_berthd "$build"
ctd_start "$registry/test/pause:v1"
sleep 2  # let containerd settle before its idle RSS is read

images=(test/busybox:latest test/busybox:other test/layered:v1 test/multi:v1 test/dlist:v1 test/hostile-etc:fifo
        test/hostile-etc:links test/pause:v1)
pull_refs=()
for i in "${images[@]}"; do pull_refs+=(--pull-stored "$registry/$i"); done
berth_helpers=()
for f in "$build"/server/berth-*; do
  [ "$(basename "$f")" = berth-pause ] || berth_helpers+=(--helper-exe "$(basename "$f")")
done
declare -A endpoint=([containerd]="unix://$ctd_sock" [berth]="unix://$sock")
declare -A pid=([containerd]=$ctd_pid [berth]=$berthd)
declare -A helpers=([containerd]="--helper-exe containerd-shim-runc-v2 --helper-marker $ctd_sock"
                    [berth]="${berth_helpers[*]} --helper-marker $work/")

rss_mib() { awk '/^VmRSS/ {printf "%.3f", $2 / 1024}' "/proc/$1/status"; }
# bench <runtime> <args...>: berth-bench against that runtime; its "figure" lines go to the
# runtime's figures file, the rest to the screen. It runs in the background (client) so that the
# clean-up can stop it when the script is interrupted.
bench() {
  local rt=$1
  shift
  echo "== $rt: berth-bench $*"
  : > "$work/run.out"
  # shellcheck disable=SC2086
  "$build/tests/bench/berth-bench" --endpoint "${endpoint[$rt]}" --runtime-pid "${pid[$rt]}" ${helpers[$rt]} \
    --calls 20 "$@" > "$work/run.out" 2>&1 &
  client=$!
  tail -n +1 --pid="$client" -f "$work/run.out" | grep -v '^figure' || true
  wait "$client" || echo "berth-bench exited with status $?"
  client=""
  cat "$work/run.out" >> "$work/$rt.out"
  echo
}

runtimes=(containerd berth)
for rt in "${runtimes[@]}"; do printf 'figure\tidle.daemon_rss_mib\t%s\n' "$(rss_mib "${pid[$rt]}")" >> "$work/$rt.out"; done
for rt in "${runtimes[@]}"; do
  bench "$rt" "${pull_refs[@]}" --pull-runs 1
  sleep 2
  printf 'figure\tpulls.daemon_rss_mib\t%s\n' "$(rss_mib "${pid[$rt]}")" >> "$work/$rt.out"
done
pod_image="$registry/test/busybox:latest"
for rt in "${runtimes[@]}"; do bench "$rt" --pod-image "$pod_image" --lifecycle --lifecycle-pods 20; done
for rt in "${runtimes[@]}"; do
  bench "$rt" --pod-image "$pod_image" --steady-state --steady-pods "$steady_pods" --duration "$seconds"
done
for rt in "${runtimes[@]}"; do bench "$rt" --pod-image "$pod_image" --density --density-pods "$density_pods"; done

"$(dirname "$0")/side-by-side-table.awk" "$work/containerd.out" "$work/berth.out"
