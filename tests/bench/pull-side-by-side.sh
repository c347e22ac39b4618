#!/usr/bin/env bash
# PullImage on berth next to Debian's containerd, in one run, from the same local registry on
# 127.0.0.1 (figures, never assertions; everything made is removed on exit):
#   1. the small busybox image: pull + status + remove as critest's image benchmark times them,
#      the median of <runs>;
#   2. a large image built from this machine's Debian packages (a layer per package, at least
#      <MiB> compressed over at least 8 layers): cold pulls, the median of 3;
#   3. that image pulled through a front (tests/registry/token-proxy.py) that cuts its largest layer
#      at 60% once, pulled again after each failure as kubelet does: the bytes the registry sent
#      over the image's size;
#   4. the runtime's RSS after all that (with the image stored), and for berth its pull helpers'.
# Usage: tests/bench/pull-side-by-side.sh <build dir> [runs (20)] [MiB (300); 0: only the small image]
# BERTH_TOML, when set, is a line added to berthd's configuration (image_pull_helper_idle_seconds = 0
# measures pulls with a helper started for each, as before berth kept them).
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
runs=${2:-20}
mib=${3:-300}
source "$(dirname "$0")/bench-env.sh"
source "$(dirname "$0")/containerd-env.sh"
trap 'ctd_cleanup; bench_cleanup' EXIT

bench_registry --pause-binary "$build/server/berth-pause"
images=(test/busybox:latest)
declare -A front
if [ "$mib" -gt 0 ]; then
images+=(test/debian:v1)
echo "building test/debian:v1 from the installed Debian packages ..."
"$(dirname "$0")/../registry/build-test-images.py" "http://$registry" --only debian --debian-mib "$mib" \
  --debian-layers 8 > "$work/debian.json"
read -r image_bytes layer_count largest packages < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["debian"]
print(d["compressed_bytes"], len(d["layers"]), max(d["layer_sizes"]), ",".join(d["packages"]))' "$work/debian.json")
echo "test/debian:v1: $((image_bytes >> 20)) MiB compressed in $layer_count layers (busybox's and $packages)"

# One cutting front per runtime: each cuts the largest layer once, at 60%.
for rt in containerd berth; do
  port=$(bench_free_port)
  "$(dirname "$0")/../registry/token-proxy.py" "$port" "http://$registry" - - --cut-blobs-at 0.6 --cuts 1 \
    --cut-min-size "$largest" > "$work/front-$rt.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  front[$rt]=127.0.0.1:$port
done
fi
served() { curl -s "http://$1/_stats" | python3 -c 'import json, sys; print(sum(json.load(sys.stdin)["served"].values()))'; }

bench_network
bench_berthd "$build" ${BERTH_TOML:+"$BERTH_TOML"}
ctd_extra_http_hosts="${front[containerd]:-}"
ctd_start "$registry/test/pause:v1"
declare -A pid_of=([berth]=$berthd [containerd]=$ctd_pid)
declare -A endpoint=([berth]="unix://$sock" [containerd]="unix://$ctd_sock")

# The proportional set size (shared pages divided among their users) of a process's descendants,
# in KiB: what the idle pull helpers and their fetchers add.
pss_of_children() {
  local p sum=0 kids
  kids=$(cat /proc/"$1"/task/*/children 2> /dev/null || true)
  for p in $kids; do
    sum=$((sum + $(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2> /dev/null || echo 0)))
    sum=$((sum + $(pss_of_children "$p")))
  done
  echo "$sum"
}

declare -A fig
# Each image is measured on both runtimes before the next, and the disk is synced in between:
# neither runtime's pulls of the small image run while the other's writes of a large one are still
# going to disk.
for image in "${images[@]}"; do
  for rt in containerd berth; do
    sync
    n=$runs
    [ "$image" = test/debian:v1 ] && n=3
    out=$("$build/tests/bench/berth-bench" --endpoint "${endpoint[$rt]}" --calls 1 --pull "$registry/$image" \
      --pull-runs "$n")
    echo "== $rt $image"
    echo "$out" | grep -v '^figure'
    fig[$rt.$image]=$(echo "$out" | awk -F'\t' '$1 == "figure" && $2 == "pull_p50_ms" { print $3 }')
  done
done
for rt in containerd berth; do
  fig[$rt.rss]=$(awk '/^VmRSS/ { print $2 }' "/proc/${pid_of[$rt]}/status")
  fig[$rt.children]=$(pss_of_children "${pid_of[$rt]}")
done
for rt in containerd berth; do
  [ "$mib" -gt 0 ] || continue
  sync
  echo "== $rt test/debian:v1 through a front that cuts its largest layer at 60%"
  out=$("$build/tests/bench/berth-bench" --endpoint "${endpoint[$rt]}" --calls 1 \
    --pull-until-ok "${front[$rt]}/test/debian:v1")
  echo "$out" | grep -v '^figure'
  fig[$rt.attempts]=$(echo "$out" | awk -F'\t' '$1 == "figure" && $2 == "pull_attempts" { print $3 }')
  fig[$rt.served]=$(served "${front[$rt]}")
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }
echo
echo "== side by side (berth/containerd)"
for image in "${images[@]}"; do
  printf '%-44s containerd %8.0f ms   berth %8.0f ms   ratio %s\n' "$image pull+status+remove (median)" \
    "${fig[containerd.$image]}" "${fig[berth.$image]}" "$(ratio "${fig[berth.$image]}" "${fig[containerd.$image]}")"
done
for rt in containerd berth; do
  [ "$mib" -gt 0 ] || break
  printf '%-11s retried pull after a cut at 60%%: %s attempts, %d of %d bytes served (%s of the image)\n' "$rt" \
    "${fig[$rt.attempts]}" "${fig[$rt.served]}" "$image_bytes" "$(ratio "${fig[$rt.served]}" "$image_bytes")"
done
mib_of() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
echo "RSS after the cold pulls, the last image stored: containerd $(mib_of "${fig[containerd.rss]}") MiB," \
  "berthd $(mib_of "${fig[berth.rss]}") MiB; berthd's idle pull helpers (PSS) $(mib_of "${fig[berth.children]}") MiB" \
  "(no container was started: neither has a shim or monitor running)"
