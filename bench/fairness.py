#!/usr/bin/env python3
"""Summaries of the simulator's fairness runs over seeds, as docs/CONGESTION.md and the journal
quote them. Reads what `fairness_across_seeds` prints (with `FAIR_RATES=1`, each flow's Mbit/s
in start order as well):

    FAIR_FLOWS=4 FAIR_RTT=300 FAIR_FIRST_SEED=17 FAIR_SEEDS=48 FAIR_RATES=1 cargo test \\
        --release -p haul-proto --test congestion fairness_across_seeds -- --ignored \\
        --nocapture --test-threads 1 > OUT 2>&1
    python3 bench/fairness.py OUT...

For each cell: the seeds, Jain's index (median, least, seeds under 0.98), RTT inflation
(median, most, seeds at +20 % or more) and efficiency (median, least); a file that holds a cell
twice (two runs of other seeds, one after the other) is summarised over both. Then, if the rates are there,
each flow's median Mbit/s by start order and how often each was the least, and what the flows
resent over the run (retransmissions per new packet: median, least, most; each flow's median
count by start order).
"""
import re
import signal
import statistics
import sys

CELL = re.compile(r"(\d+) flows (\d+) ms: ([^\n]*?)(?=\d+ flows \d+ ms:|\n|$)")
RATES = re.compile(r"Mbit/s in the order the flows started ([\d. ]+)")
RESENT = re.compile(r"retransmissions over \d+ new packets \(([\d.]+)\), in start order ([\d ]+)")


def summarise(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}: give the output of a fairness_across_seeds run")
    cells = CELL.findall(text)
    if not cells:
        sys.exit(f"{path}: no '<n> flows <rtt> ms:' line: is it fairness_across_seeds' output?")
    by_cell = {}
    for flows, rtt, seeds in cells:
        # Each seed reads Jain / least share / RTT inflation / efficiency.
        by_cell.setdefault((flows, rtt), []).extend(
            [float(x) for x in seed.split("/")] for seed in seeds.split())
    for (flows, rtt), runs in by_cell.items():
        jain = [r[0] for r in runs]
        rtt_inflation = [r[2] for r in runs]
        efficiency = [r[3] for r in runs]
        print("%s: %s flows %s ms, %d seeds: Jain median %.3f, least %.3f, %d under 0.98; "
              "RTT median %+.2f, most %+.2f, %d at +0.20 or more; efficiency median %.3f, "
              "least %.3f" % (
                  path, flows, rtt, len(runs), statistics.median(jain), min(jain),
                  sum(j < 0.98 for j in jain), statistics.median(rtt_inflation),
                  max(rtt_inflation), sum(q >= 0.2 for q in rtt_inflation),
                  statistics.median(efficiency), min(efficiency)))
    rates = [[float(x) for x in m.split()] for m in RATES.findall(text)]
    if rates and len(by_cell) == 1:
        flows = max(len(r) for r in rates)  # a seed whose flow never connected has fewer
        least = [0] * flows
        for r in rates:
            least[r.index(min(r))] += 1
        print("%s: by start order, median Mbit/s %s, the least %s times" % (
            path, [round(median_of(rates, i), 1) for i in range(flows)], least))
    resent = RESENT.findall(text)
    if resent and len(by_cell) == 1:
        share = [float(r[0]) for r in resent]
        each = [[int(x) for x in r[1].split()] for r in resent]
        print("%s: retransmissions per new packet median %.3f, least %.3f, most %.3f; "
              "by start order, median %s packets" % (
                  path, statistics.median(share), min(share), max(share),
                  [round(median_of(each, i)) for i in range(max(len(e) for e in each))]))


def median_of(rows, i):
    """The median of column `i` over the rows that have it."""
    return statistics.median(r[i] for r in rows if len(r) > i)


signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the summary quietly
for argument in sys.argv[1:] or sys.exit(__doc__):
    summarise(argument)
