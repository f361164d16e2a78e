#!/bin/sh
# Two builds taking turns, run by run, through docs/lab/s73/late-driver.sh (one haul perf client
# across the lab's 100 Mbit/s link, 1-BDP queue, 5 s, optionally beside CPU hogs). Session 74,
# "Answers that say how long they waited". Needs root and two release builds. Not a test.
#     sudo sh docs/lab/s74/ab.sh OUTDIR PAIRS RTT HOGS LOSS BUILD_A BUILD_B
#     e.g. sh docs/lab/s74/ab.sh /tmp/ab 8 10ms 2 0.01 /tmp/haul-base /tmp/haul-wait
# Prints one line per run: the arm, Mbit/s, retransmissions, and the overrun cuts ('a drain into
# an overflowing queue' in the sender's trace); then each arm's runs and median.
set -eu
OUT=$1; PAIRS=$2; RTT=$3; HOGS=$4; LOSS=$5; A=$6; B=$7
LATE="$(cd "$(dirname "$0")/../s73" && pwd)/late-driver.sh"
mkdir -p "$OUT"
i=1
while [ "$i" -le "$PAIRS" ]; do
  for arm in a b; do
    if [ "$arm" = a ]; then build=$A; else build=$B; fi
    dir="$OUT/$arm-$i"
    line=$(HAUL=$build sh "$LATE" "$dir" "$RTT" "$HOGS" "$LOSS" || echo "bps nan recv nan rtx nan")
    cuts=$(grep -c "a drain into an overflowing queue" "$dir/trace.log" || true)
    echo "$arm $i $line cuts $cuts" | tee -a "$OUT/runs.txt"
  done
  i=$((i + 1))
done
python3 - "$OUT/runs.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    runs.setdefault(f[0], []).append((f[3], f[7], f[9]))
for arm, rs in sorted(runs.items()):
    bps = [float(r[0]) for r in rs if r[0] != "nan"]
    print(arm, " ".join(f"{r[0]} [{r[2]}]" for r in rs),
          " median", round(statistics.median(bps), 1) if bps else "nan",
          " rtx", " ".join(r[1] for r in rs))
PY
