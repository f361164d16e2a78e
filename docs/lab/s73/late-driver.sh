#!/bin/sh
# One haul perf run across the lab's 100 Mbit/s link (1-BDP queue), optionally beside CPU hogs,
# with the sender's controller traced (session 73, "Pacing credit for a late driver").
# Needs root and a release build. Not a test: it measures.
#     sudo sh docs/lab/s73/late-driver.sh OUTDIR RTT HOGS [LOSS]
#     e.g. HAUL=/tmp/haul-a sh docs/lab/s73/late-driver.sh /tmp/a1 10ms 2
# Prints the client's rate, the server's, and the sender's retransmissions; OUTDIR keeps
# haul.json (0.1 s intervals) and trace.log (python3 bench/rounds.py OUTDIR/trace.log).
set -eu
OUT=$1; RTT=$2; HOGS=$3; LOSS=${4:-0}
HAUL=${HAUL:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release/haul}
mkdir -p "$OUT"
cat > "$OUT/client.sh" <<INNER
#!/bin/sh
env HAUL_LOG=haul_proto::cc=debug,haul_proto::cc::model=trace NO_COLOR=1 \
  $HAUL perf -c 10.77.0.2 -t 5 --interval 0.1 --json > $OUT/haul.json 2>$OUT/trace.log
INNER
chmod +x "$OUT/client.sh"
i=0
while [ "$i" -lt "$HOGS" ]; do
  timeout 60 sh -c 'while :; do :; done' &
  i=$((i + 1))
done
"$HAUL" lab link --rate 100M --rtt "$RTT" --loss "$LOSS" \
  --server "exec $HAUL perf -s >/dev/null 2>&1" -- "$OUT/client.sh" >/dev/null 2>&1 || true
pkill -f "while :; do :; done" || true
[ -s "$OUT/haul.json" ] || { echo "late-driver.sh: no result in $OUT/haul.json (root? a release build at $HAUL? see $OUT/trace.log)" >&2; exit 1; }
python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/haul.json"))
r = d["receiver"]
print("bps", round(d["bits_per_second"] / 1e6, 1), "recv",
      round(r["bytes"] * 8 / r["seconds"] / 1e6, 1), "rtx", d["sender"].get("retransmits"))
PY
