#!/usr/bin/env bash
# Prints berthd's idle memory: starts it on temp dirs, makes a few rpcs, waits, then reports
# VmRSS, RssAnon, RssFile, Pss, the thread count, the mapped shared libraries and the mappings
# holding the most Rss. Asserts nothing; removes what it created. Usage: rss-bench.sh <build dir>
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
w=$(mktemp -d /tmp/berth-rss-bench.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$w"
}
trap cleanup EXIT
mkdir -p "$w/net"
printf 'cni_conf_dir = "%s/net"\n' "$w" > "$w/berth.toml"
"$build/server/berthd" --socket "$w/s.sock" --root "$w/root" --state "$w/state" --config "$w/berth.toml" \
  > "$w/berthd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$w/s.sock" ] && break; sleep 0.1; done
[ -S "$w/s.sock" ] || { echo "rss-bench: berthd did not start:" >&2; cat "$w/berthd.log" >&2; exit 1; }
"$build/tests/bench/berth-bench" --endpoint "unix://$w/s.sock" --calls 100 > /dev/null
sleep 2
echo "berthd idle after $(basename "$build")/tests/bench/berth-bench --calls 100:"
grep -E '^(VmRSS|RssAnon|RssFile|RssShmem|Threads):' "/proc/$pid/status"
awk '/^Pss:/ {s += $2} END {printf "Pss:\t%8d kB\n", s}' "/proc/$pid/smaps"
echo "shared libraries mapped: $(grep -o '/[^ ]*\.so[.0-9]*$' "/proc/$pid/maps" | sort -u | grep -vc ld-linux)"
echo "top mappings by Rss (kB, summed per file):"
awk '/^[0-9a-f]+-[0-9a-f]+ / {name = (NF >= 6) ? $6 : "[anon]"} /^Rss:/ {rss[name] += $2}
     END {for (n in rss) if (rss[n] > 0) printf "%8d  %s\n", rss[n], n}' "/proc/$pid/smaps" | sort -rn | head -15
