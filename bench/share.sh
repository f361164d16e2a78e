#!/bin/sh
# haul sharing a bottleneck with one TCP CUBIC flow (iperf3), side by side in the lab: 100 Mbit/s,
# 1-BDP drop-tail queue, no random loss, 30 and 100 ms; haul with --policy fair, then scavenger.
# Needs root, iperf3 and a release build. Prints one line per cell. Not a test: it measures.
#     sudo sh bench/share.sh
# HAUL=path compares another build; POLICIES="fair" and RTTS="30ms" narrow the grid; SERIES=1
# prints both flows second by second; SECS (20) sets how long CUBIC runs (haul's share sinks
# through the first minute: SECS=180 shows where it settles); PARALLEL=4 runs haul as four
# parallel streams (haul perf -P 4), counted together.
#
# Both flows run server to client (-R) so that each rate is what its receiver got: a haul sender's
# own count is what it wrote into its send buffer (so the policy is set on the server). haul's
# figure is its bytes delivered while CUBIC ran (CUBIC starts 0.5 s earlier and runs SECS); what
# haul delivers after, draining its send buffer, does not count.
set -eu
SECS=${SECS:-20}
case $SECS in
  ''|*[!0-9]*|0|1) echo "bench/share.sh: SECS must be a whole number of seconds, 2 or more (got '$SECS'), e.g. SECS=180" >&2; exit 2 ;;
esac
PARALLEL=${PARALLEL:-1}
case $PARALLEL in
  ''|*[!0-9]*|0) echo "bench/share.sh: PARALLEL must be a whole number of streams, 1 or more (got '$PARALLEL'), e.g. PARALLEL=4" >&2; exit 2 ;;
esac
HAUL=${HAUL:-$(cd "$(dirname "$0")/.." && pwd)/target/release/haul}
command -v iperf3 >/dev/null || { echo "bench/share.sh: iperf3 is not installed (apt-get install iperf3)" >&2; exit 2; }
command -v "$HAUL" >/dev/null || { echo "bench/share.sh: no haul binary at $HAUL (cargo build --release -p haul, or set HAUL=path)" >&2; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/pair.sh" <<INNER
#!/bin/sh
iperf3 -c 10.77.0.2 -p 5201 -R -C cubic -t $SECS -J > $OUT/tcp.json &
sleep 0.5
$HAUL perf -c 10.77.0.2 -R -P $PARALLEL -t $((SECS - 1)) --json > $OUT/haul.json 2>/dev/null
wait
INNER
chmod +x "$OUT/pair.sh"
for policy in ${POLICIES:-fair scavenger}; do
  for rtt in ${RTTS:-30ms 100ms}; do
    "$HAUL" lab link --rate 100M --rtt "$rtt" \
      --server "iperf3 -s -p 5201 -D; exec $HAUL perf -s --policy $policy >/dev/null 2>&1" \
      -- "$OUT/pair.sh" >/dev/null 2>&1
    python3 - "$policy" "$rtt" "$OUT" "${SERIES:-}" "$SECS" <<'PY'
import json, sys
policy, rtt, out, series, secs = sys.argv[1:]
try:
    tcp_run = json.load(open(f"{out}/tcp.json"))
    haul_run = json.load(open(f"{out}/haul.json"))
except (OSError, ValueError) as e:
    sys.exit(f"bench/share.sh: {rtt}, {policy}: no result from iperf3 or haul perf ({e}); "
             "run the cell by hand under `haul lab link` to see why")
tcp = tcp_run["end"]["sum_received"]["bits_per_second"] / 1e6
# haul's clock starts 0.5 s after CUBIC's: its intervals ending by SECS - 0.5 s overlap CUBIC's run.
window = [i for i in haul_run["intervals"] if i["end"] <= float(secs) - 0.45]
haul = sum(i["bytes"] for i in window) * 8 / 1e6 / max(window[-1]["end"], 1e-9) if window else 0.0
print(f"100 Mbit/s {rtt:>5}, haul {policy:9}: haul {haul:5.1f} Mbit/s, CUBIC {tcp:5.1f} Mbit/s, "
      f"CUBIC's share {tcp / (tcp + haul):.2f}")
if series:
    cubic = [i["sum"]["bits_per_second"] / 1e6 for i in tcp_run["intervals"]]
    for s, iv in enumerate(window):
        c = cubic[s + 1] if s + 1 < len(cubic) else float("nan")
        print(f"  {iv['end']:5.1f} s  haul {iv['bits_per_second'] / 1e6:6.1f}  CUBIC {c:6.1f}  "
              f"rtt {iv['rtt_us'] / 1e3:6.1f} ms  pacing {iv['pacing_bps'] / 1e6:6.1f}")
PY
  done
done
