#!/bin/sh
# haul sharing a bottleneck with one TCP CUBIC flow (iperf3), side by side in the lab: 100 Mbit/s,
# 1-BDP drop-tail queue, no random loss, 30 and 100 ms; haul with --policy fair, then scavenger.
# Needs root, iperf3 and a release build. Prints one line per cell. Not a test: it measures.
#     sudo sh bench/share.sh
# HAUL=path compares another build; POLICIES="fair" and RTTS="30ms" narrow the grid.
set -eu
HAUL=${HAUL:-$(cd "$(dirname "$0")/.." && pwd)/target/release/haul}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/pair.sh" <<INNER
#!/bin/sh
iperf3 -c 10.77.0.2 -p 5201 -C cubic -t 20 -J > $OUT/tcp.json &
sleep 0.5
$HAUL perf -c 10.77.0.2 -t 19 --policy \$1 --json > $OUT/haul.json 2>/dev/null
wait
INNER
chmod +x "$OUT/pair.sh"
for policy in ${POLICIES:-fair scavenger}; do
  for rtt in ${RTTS:-30ms 100ms}; do
    "$HAUL" lab link --rate 100M --rtt "$rtt" \
      --server "iperf3 -s -p 5201 -D; exec $HAUL perf -s >/dev/null 2>&1" \
      -- "$OUT/pair.sh" "$policy" >/dev/null 2>&1
    python3 - "$policy" "$rtt" "$OUT" <<'PY'
import json, sys
policy, rtt, out = sys.argv[1:]
tcp = json.load(open(f"{out}/tcp.json"))["end"]["sum_received"]["bits_per_second"] / 1e6
haul = json.load(open(f"{out}/haul.json"))["bits_per_second"] / 1e6
print(f"100 Mbit/s {rtt:>5}, haul {policy:9}: haul {haul:5.1f} Mbit/s, CUBIC {tcp:5.1f} Mbit/s, "
      f"CUBIC's share {tcp / (tcp + haul):.2f}")
PY
  done
done
