"""Compares two outputs of `beside_cubic_across_seeds` (CUBIC_SECS=120 CUBIC_END_SECS=100), per
RTT: haul's least and mean over the last 100 s, seeds under 25 Mbit/s, and CUBIC's least.
    python3 docs/lab/s69/cubcmp.py BEFORE.txt AFTER.txt
"""
import re,sys
def load(f):
    d={}
    for l in open(f):
        m=re.search(r'(\d+) ms, seed (\d+): CUBIC +([\d.]+) \( *([\d.]+) in the last 100 s\), haul +([\d.]+) \( *([\d.]+)\)',l)
        if m: d[(int(m[1]),int(m[2]))]=(float(m[3]),float(m[4]),float(m[5]),float(m[6]))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
for rtt in (30,100):
    ks=[k for k in a if k[0]==rtt and k in b]
    if not ks: continue
    for name,d in ((sys.argv[1],a),(sys.argv[2],b)):
        h=[d[k][3] for k in ks]; hr=[d[k][2] for k in ks]; c=[d[k][1] for k in ks]
        print(f"{rtt} ms {name}: n={len(ks)} haul last100 min {min(h):.1f} mean {sum(h)/len(h):.1f} under25 {sum(x<25 for x in h)}; run min {min(hr):.1f} under25 {sum(x<25 for x in hr)}; cubic last100 min {min(c):.1f}")
