"""Summarises docs/lab/s83/lab-alone.sh runs: the second flow's goodput in each second from 20 s
after its start (the first flow stopped at about 19 s of the second's clock), and the first of
those seconds at 90 % of the link or more (89 Mbit/s of 100).
    python3 docs/lab/s83/alonesum.py DIR/A-1 DIR/A-2 ...
"""
import json
import os
import sys

FULL = 0.9 * 100 * 1456 / 1472
for run in sys.argv[1:]:
    path = os.path.join(run, "second.json")
    try:
        data = json.load(open(path))
    except (OSError, ValueError) as e:
        print("%s: no result (%s)" % (run, e))
        continue
    alone = [i["bits_per_second"] / 1e6 for i in data["intervals"] if i["start"] >= 20]
    full = next((20 + k for k, m in enumerate(alone) if m >= FULL), None)
    each = " ".join("%.0f" % m for m in alone)
    when = "%d s" % full if full is not None else "never"
    print("%s: first full second from %s; Mbit/s from 20 s: %s" % (run, when, each))
