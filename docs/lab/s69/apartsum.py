"""Summarises docs/lab/s69/lab-apart.sh runs: each run's Jain index over the flows' goodput
(10–20 s after the first start), the first flow's RTT over the link's, each flow's rate, and
the segments the emulator's queue dropped on the way to the servers over the whole run.
    RTT_MS=300 python3 docs/lab/s69/apartsum.py DIR/A-1 DIR/A-2 ...
"""
import glob
import json
import os
import re
import sys

link_us = float(os.environ.get("RTT_MS", "300")) * 1e3
for run in sys.argv[1:]:
    rates, rtts = [], []
    for path in sorted(glob.glob(os.path.join(run, "flow-*.json"))):
        try:
            data = json.load(open(path))
        except (OSError, ValueError):
            rates.append(0.0)
            continue
        rates.append(data["bits_per_second"] / 1e6)
        if path.endswith("flow-0.json"):
            rtts = [i["rtt_us"] for i in data["intervals"] if not i["omitted"] and i["rtt_us"] > 0]
    jain = sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates)) if any(rates) else 0.0
    rtt = "%+.0f %%" % ((sum(rtts) / len(rtts) / link_us - 1) * 100) if rtts else "?"
    each = " ".join("%.1f" % r for r in rates)
    try:
        link = open(os.path.join(run, "link.err")).read()
        drops = re.search(r"client→server:.*queue drops (\d+)", link).group(1)
    except (OSError, AttributeError):
        drops = "?"
    print("%s: Jain %.3f, RTT %s, each %s Mbit/s, queue drops %s" % (run, jain, rtt, each, drops))
