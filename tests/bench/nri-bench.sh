#!/usr/bin/env bash
# NRI's cost per pod: berth-bench --lifecycle (RunPodSandbox, CreateContainer + StartContainer,
# stop and removal, one pod after another) against a berthd on the same work dir, three times in
# turn: [nri] off, on with no plugin, and on with one plugin subscribed to every event
# (tests/nri/nri-test-plugin.py, started by berthd from its plugin directory: Python, so its own
# time to answer is in the last figure). The three take turns for a number of rounds (one run's
# spread between berthds is larger than NRI's cost); the summary is each one's median of the
# rounds' p50 pod start (RunPodSandbox + CreateContainer + StartContainer).
# Usage: tests/bench/nri-bench.sh <build dir> [pods per round] [rounds]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
pods=${2:-20}
rounds=${3:-5}
source "$(dirname "$0")/bench-env.sh"
bench_registry --only busybox
bench_network
mkdir -p "$work/nri/plugins" "$work/nri/empty" "$work/nri/conf"
printf '#!/bin/sh\nexec /usr/bin/python3 %s/tests/nri/nri-test-plugin.py --proto %s/api/nri/api.proto\n' \
  "$bench_src" "$bench_src" > "$work/nri/plugins/10-trivial"
chmod 755 "$work/nri/plugins/10-trivial"
echo '{"events": "all"}' > "$work/nri/conf/10-trivial.conf"

measure() {
  local label=$1
  shift
  bench_berthd "$build" "$@"
  echo "=== $label"
  "$build/tests/bench/berth-bench" --endpoint "unix://$sock" --calls 10 --runtime-pid "$berthd" \
    --pod-image "$registry/test/busybox:latest" --lifecycle --lifecycle-pods "$pods" | sed -n '/pod lifecycle/,$p' |
    tee "$work/last.txt"
  awk -v l="$label" '$2 == "lifecycle.RunPodSandbox+CreateContainer+StartContainer.p50_ms" { print l "\t" $3 }' \
    "$work/last.txt" >> "$work/p50.tsv"
  kill "$berthd"
  wait "$berthd" || true
  berthd=""
}
off=(); none=(); one=()
none=('[nri]' 'enable = true' "socket_path = \"$work/nri/nri.sock\"" "plugin_path = \"$work/nri/empty\""
  "plugin_config_path = \"$work/nri/conf\"")
one=('[nri]' 'enable = true' "socket_path = \"$work/nri/nri.sock\"" "plugin_path = \"$work/nri/plugins\""
  "plugin_config_path = \"$work/nri/conf\"")
for round in $(seq "$rounds"); do
  echo "##### round $round of $rounds"
  measure "NRI off" "${off[@]}"
  measure "NRI on, no plugin" "${none[@]}"
  measure "NRI on, one plugin subscribed to every event" "${one[@]}"
done
echo
echo "pod start (RunPodSandbox + CreateContainer + StartContainer), median of $rounds rounds' p50, ms:"
sort -t $'\t' -k1,1 -k2,2n "$work/p50.tsv" | awk -F'\t' '
  { v[$1] = v[$1] " " $2; n[$1]++; all[$1, n[$1]] = $2 }
  END { for (l in n) { m = all[l, int((n[l] + 1) / 2)]; printf "%-48s %8.1f   (rounds:%s)\n", l, m, v[l] } }' | sort
