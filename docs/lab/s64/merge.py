"""Medians over several fairness_across_seeds outputs of one cell (per-seed Jain/least/RTT/efficiency)."""
import re, sys, statistics as st
v = []
for f in sys.argv[1:]:
    for l in open(f):
        if re.match(r'\s*\d+ flows \d+ ms:', l):
            v += [tuple(float(x) for x in t.split('/')) for t in l.split(':', 1)[1].split()]
j = [x[0] for x in v]; r = [x[2] for x in v]; e = [x[3] for x in v]
print(f"{len(v)} seeds: Jain median {st.median(j):.3f}, least {min(j):.3f}, {sum(x < 0.98 for x in j)} under 0.98; "
      f"RTT median {st.median(r):+.2f}, most {max(r):+.2f}, {sum(x >= 0.2 for x in r)} at +0.20 or more; efficiency median {st.median(e):.3f}, least {min(e):.3f}")
