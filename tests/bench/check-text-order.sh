#!/usr/bin/env bash
# Checks that berthd was laid out by server/berthd-text-order.ld and that the order still names
# most of berthd's code: fails when the ordered section is missing (the link lost the script) or
# holds less than 60 % of the bytes the file was generated with (functions were renamed or
# rewritten since: run tests/bench/text-order.sh again). Usage: check-text-order.sh <berthd> <order.ld>
set -euo pipefail
berthd=$1
order=$2
recorded=$(grep -o '[0-9]* of [0-9]* bytes of code' "$order" | head -1 | cut -d' ' -f1)
[ -n "$recorded" ] || { echo "check-text-order: $order records no byte count" >&2; exit 1; }
size_hex=$(readelf -SW "$berthd" | awk '$2 == ".text.berth_order" {print $6}')
[ -n "$size_hex" ] || { echo "check-text-order: $berthd has no .text.berth_order section: the order was not applied" >&2; exit 1; }
size=$((16#$size_hex))
echo "check-text-order: .text.berth_order holds $size bytes; $order was generated with $recorded"
if [ $((size * 100)) -lt $((recorded * 60)) ]; then
  echo "check-text-order: less than 60 % of the ordered code is left: regenerate it with tests/bench/text-order.sh" >&2
  exit 1
fi
