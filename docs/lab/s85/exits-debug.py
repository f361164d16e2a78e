#!/usr/bin/env python3
"""Per seed of a two-flow fairness run logged at HAUL_LOG=haul_proto::cc=debug: the newcomer's
first start-up exit rate (the second "start-up:" line of the seed), split by whether the seed's
Jain index is under 0.98, with a histogram over <1000, 1000-2000, 2000-4000, >=4000 packets/s.
    python3 docs/lab/s85/exits-debug.py LOG
"""
import re
import statistics
import sys

text = open(sys.argv[1], errors="replace").read()
seeds, current = [], []
for line in text.splitlines():
    if re.search(r"seed \d+: Mbit/s in the order the flows started", line):
        seeds.append(current)
        current = []
    elif "start-up:" in line:
        current.append(line)
jains = [float(x.split("/")[0]) for x in re.findall(r"2 flows \d+ ms: ([^\n]*)", text)[-1].split()]
groups = {"under 0.98": [], "0.98 or more": []}
for lines, jain in zip(seeds, jains):
    rates = [float(m.group(1)) for l in lines if (m := re.search(r"bw=([\d.]+)", l))]
    if len(rates) >= 2:
        groups["under 0.98" if jain < 0.98 else "0.98 or more"].append(rates[1])
for name, rates in groups.items():
    bins = [(0, 1000), (1000, 2000), (2000, 4000), (4000, float("inf"))]
    hist = [sum(lo <= r < hi for r in rates) for lo, hi in bins]
    print(f"{name}: {len(rates)} seeds, newcomer's exit median {statistics.median(rates):.0f}, by bin {hist}")
