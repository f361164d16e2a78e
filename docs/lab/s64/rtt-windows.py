"""RTT inflation over 10-20 s and 20-30 s of each haul perf --json run in DIR (from its 0.1 s
intervals; the path's RTT is RTT_MS from the environment, 300 by default), a line per run, then
each arm's medians. Usage: rtt-windows.py DIR..."""
import json, os, sys, glob, statistics as st
RTT_MS = float(os.environ.get('RTT_MS', 300))
for d in sys.argv[1:]:
    for arm in 'AB':
        a = []; b = []
        for f in sorted(glob.glob(f'{d}/{arm}-*.json'), key=lambda f: int(f.split('-')[-1][:-5])):
            iv = json.load(open(f))['intervals']
            def infl(lo, hi):
                r = [x['rtt_us'] for x in iv if lo <= x['start'] < hi and x['rtt_us'] > 0]
                return (sum(r) / len(r) / (1000 * RTT_MS) - 1) * 100
            a.append(infl(10, 20)); b.append(infl(20, 30))
            print(f"{f.split('/')[-1][:-5]}: RTT 10-20 s {a[-1]:+.0f} %, 20-30 s {b[-1]:+.0f} %")
        print(f"{arm}: n={len(a)} RTT 10-20 s median {st.median(a):+.0f} % (<=10: {sum(x <= 10 for x in a)}), 20-30 s median {st.median(b):+.0f} % (<=10: {sum(x <= 10 for x in b)})")
