#!/usr/bin/env python3
"""Per seed of a traced `fairness_across_seeds` log (four flows, seeds from 17): the mean of the
rounds' least RTT over the link's (ms, 10-20 s after the first round), then per flow in start
order `base/queue` (the median base RTT and the median round's least RTT over 10-20 s, each
minus RTT_MS) and F where the flow held another flow's queue in a third of its rounds or more.

    HAUL_LOG=haul_proto::cc=debug,haul_proto::cc::model=trace NO_COLOR=1 FAIR_SHARE_RTT=0 \\
        FAIR_FLOWS=4 FAIR_RTT=300 FAIR_FIRST_SEED=17 FAIR_SEEDS=96 FAIR_RATES=1 FAIR_JITTER=1 \\
        cargo test --release -p haul-proto --test congestion fairness_across_seeds -- \\
        --ignored --nocapture --test-threads 1 > LOG 2>&1
    python3 docs/lab/s79/bases.py LOG
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench"))
import rounds  # noqa: E402

RTT_MS = float(os.environ.get("RTT_MS", "300"))

if "--help" in sys.argv[1:] or "-h" in sys.argv[1:]:
    print(__doc__)
    sys.exit(0)
if len(sys.argv) != 2:
    sys.exit("usage: python3 docs/lab/s79/bases.py LOG (a traced run; --help shows the command)")

for index, run in enumerate(rounds.runs(sys.argv[1])):
    run = [r for r in rounds.by_flow(run) if 10 <= r["t"] <= 20]
    if not run:
        print(17 + index, "no rounds between 10 and 20 s: was the run that long?")
        continue
    cells = []
    for flow in sorted({r["flow"] for r in run}):
        mine = [r for r in run if r["flow"] == flow]
        base = statistics.median(rounds.base(r) for r in mine) - RTT_MS
        queue = statistics.median(rounds.millis(r["round_min_rtt"]) for r in mine) - RTT_MS
        foreign = sum(r["foreign"] == "true" for r in mine) / len(mine) > 0.3
        cells.append("%3.0f/%3.0f%s" % (base, queue, "F" if foreign else " "))
    mean = statistics.mean(rounds.millis(r["round_min_rtt"]) for r in run) - RTT_MS
    print(17 + index, "%4.0f" % mean, " ".join(cells))
