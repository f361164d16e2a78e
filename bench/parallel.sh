#!/bin/sh
# Parallel haul connections sharing one emulated bottleneck (`haul perf -P N` through
# `haul lab link`): each connection's goodput at the receiver, their Jain fairness index and
# the queue they keep between them (the first connection's smoothed RTT, sampled every 0.1 s,
# over the link's RTT, minus 1; the emulator adds about 6 % at 10 ms), over the steady state. The connections start together unless STAGGER says how far apart
# (`haul perf --stagger`). Needs root and a release build. Not a test: it measures.
#     sudo sh bench/parallel.sh
# HAUL=path picks another build; RATE (100M), RTTS ("10ms 100ms 300ms"), FLOWS ("2 4"),
# TIME (15), OMIT (5) and STAGGER (0s) change the grid; ROUNDS=n repeats it; TCP_CC=bbr (or
# cubic) runs kernel TCP instead of haul, for comparison. As the
# simulator's fairness tests (a second apart, measured from 10 s to 20 s after the first start):
#     sudo STAGGER=1s OMIT=10 TIME=10 sh bench/parallel.sh
set -eu
HAUL=${HAUL:-$(cd "$(dirname "$0")/.." && pwd)/target/release/haul}
for round in $(seq "${ROUNDS:-1}"); do
  for rtt in ${RTTS:-10ms 100ms 300ms}; do
    for flows in ${FLOWS:-2 4}; do
      "$HAUL" lab link --rate "${RATE:-100M}" --rtt "$rtt" --server "exec $HAUL perf -s >/dev/null 2>&1" -- \
        "$HAUL" perf -c 10.77.0.2 -P "$flows" -t "${TIME:-15}" --omit "${OMIT:-5}" \
        --stagger "${STAGGER:-0s}" --interval 0.1 ${TCP_CC:+--tcp --tcp-cc "$TCP_CC"} --json 2>/dev/null |
        python3 -c '
import json, sys
transport, rate, rtt, flows, rnd = sys.argv[1:]
text = sys.stdin.read()
if not text.strip():
    print("%s %s %6s %s flows (round %s): the test failed; run it by hand to see why: "
          "haul lab link --rate %s --rtt %s --server \"haul perf -s\" -- haul perf -c 10.77.0.2 -P %s"
          % (transport, rate, rtt, flows, rnd, rate, rtt, flows))
    sys.exit(0)
d = json.loads(text)
seconds, streams = d["receiver"]["seconds"], d["receiver"]["streams"]
total, jain = d["bits_per_second"] / 1e6, d["jain_index"]
each = " ".join("%.1f" % (b * 8 / seconds / 1e6) for b in streams)
rtts = [i["rtt_us"] for i in d["intervals"] if not i["omitted"] and i["rtt_us"] > 0]
link_us = float(rtt[:-2]) * 1e3 if rtt.endswith("ms") else float(rtt.rstrip("s")) * 1e6
inflation = "%+.0f %%" % ((sum(rtts) / len(rtts) / link_us - 1) * 100) if rtts else "?"
print("%s %s %6s %s flows (round %s): %7.1f Mbit/s, Jain %.3f, RTT %s, each %s"
      % (transport, rate, rtt, flows, rnd, total, jain, inflation, each))
' "${TCP_CC:-haul}" "${RATE:-100M}" "$rtt" "$flows" "$round"
    done
  done
done
