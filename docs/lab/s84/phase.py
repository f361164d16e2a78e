import re,sys,statistics
R=re.compile(r"model round isn=(\d+) now=Instant \{ tv_sec: (\d+), tv_nsec: (\d+) \} phase=(\w+) gain=([\d.]+) cycle=(\d+) draining=(\w+).*? bw_pps=([\d.]+)")
S=re.compile(r"seed (\d+): Mbit/s in the order the flows started ([\d.]+) ([\d.]+)")
cur=[];out=[]
for l in open(sys.argv[1],errors="replace"):
    m=R.search(l)
    if m:
        isn,s,ns,ph,g,c,d,bw=m.groups(); cur.append((int(isn),int(s)+int(ns)/1e9,ph,float(g),int(c),d=="true",float(bw))); continue
    m=S.search(l)
    if m:
        out.append((int(m.group(1)),float(m.group(2)),float(m.group(3)),cur)); cur=[]
for seed,a,b,rs in out:
    order=[];first={}
    for isn,t,*_ in rs:
        if isn not in first: first[isn]=t; order.append(isn)
    t0=first[order[1]]
    # probe round ends (cycle==0 rows are rounds that *ended*? use rows where cycle==1 and gain<1 => a probe just ended)
    def probes(isn):
        return [t for i,t,ph,g,c,d,bw in rs if i==isn and ph=="Cruise" and c==0 and g>1.0 and t0+8<=t<=t0+18]
    p0=probes(order[0]); p1=probes(order[1])
    offs=[]
    for t in p1:
        prev=[x for x in p0 if abs(x-t)<1.2]
        if prev:
            d=min(prev,key=lambda x:abs(x-t)); offs.append(t-d)
    share=b/(a+b)
    j=(a+b)**2/(2*(a*a+b*b))
    print(seed,"J %.3f new-share %.2f"%(j,share),"probes inc/new %d/%d"%(len(p0),len(p1)),"offsets(new-inc) "+" ".join("%+.2f"%o for o in offs))
