import re,sys,statistics as st
for p in sys.argv[1:]:
    t=open(p,errors="replace").read()
    m=re.findall(r"\d+ flows \d+ ms: ([^\n]*)",t)
    runs=[tuple(float(x) for x in s.split("/")) for c in m for s in c.split()]
    res=[float(x) for x in re.findall(r"new packets \(([\d.]+)\)",t)]
    j=[r[0] for r in runs]; q=[r[2] for r in runs]; e=[r[3] for r in runs]
    print("%-40s n=%d under0.98 %d  rtt>=10 %d >=20 %d  resent med %.3f  eff med %.3f min %.3f jain min %.3f"%(p,len(runs),sum(x<0.98 for x in j),sum(x>=0.1 for x in q),sum(x>=0.2 for x in q),st.median(res) if res else -1,st.median(e) if e else -1,min(e) if e else -1,min(j) if j else -1))
