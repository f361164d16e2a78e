import re,sys
for p in sys.argv[1:]:
    t=open(p).read()
    rates=dict((int(s),r) for s,r in re.findall(r"seed (\d+): Mbit/s in the order the flows started ([\d. ]+)",t))
    res=dict((int(s),(float(a),b)) for s,a,b in re.findall(r"seed (\d+): \d+ retransmissions over \d+ new packets \(([\d.]+)\), in start order ([\d ]+)",t))
    cells=re.findall(r"\d+ flows \d+ ms: ([^\n]*)",t)
    runs=[s for c in cells for s in c.split()]
    for s,r in zip(sorted(rates),runs):
        j=float(r.split("/")[0]); q=float(r.split("/")[2])
        if j<0.98 or q>=0.2: print(p[-25:],s,r,rates[s],res[s])
