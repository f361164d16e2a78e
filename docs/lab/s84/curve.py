import re,sys,statistics
# per seed: list of (t, a, b) goodput; newcomer = smaller at first line
L=re.compile(r"^\s*(?:test fairness_across_seeds \.\.\. )?\s*([\d.]+) s\s+([\d.]+) \(.*\|\s+([\d.]+) \(")
seeds=[];cur=[]
for l in open(sys.argv[1]):
    m=L.match(l)
    if m:
        t,a,b=map(float,m.groups())
        if t==0.5 and cur: seeds.append(cur); cur=[]
        cur.append((t,a,b))
if cur: seeds.append(cur)
shares=[]
for s in seeds:
    swap = s[0][1] > s[0][2]
    shares.append([ (b if swap else a)/(a+b) if a+b>0 else 0 for t,a,b in s])
n=len(shares[0])
print(len(seeds),"seeds; newcomer share of what both deliver, by half second: median / 10th pct / count<0.4")
for i in range(0,n,2):
    col=sorted(x[i] for x in shares if len(x)>i)
    print("%5.1f s  %.2f  %.2f  %d"%((i+1)*0.5, statistics.median(col), col[len(col)//10], sum(1 for c in col if c<0.4)))
