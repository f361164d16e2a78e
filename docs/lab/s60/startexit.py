import re,sys,statistics,collections
def parse(fn):
    seeds=[];cur=collections.OrderedDict();t0=None
    for line in open(fn):
        if 'Mbit/s in the order' in line:
            seeds.append(cur);cur=collections.OrderedDict();t0=None;continue
        if 'model round' not in line: continue
        isn=re.search(r'isn=(\d+)',line).group(1)
        m=re.search(r'tv_sec: (\d+), tv_nsec: (\d+)',line); t=int(m.group(1))+int(m.group(2))/1e9
        if t0 is None: t0=t
        ph=re.search(r'phase=(\w+)',line).group(1); bw=float(re.search(r'bw_pps=([\d.e+-]+)',line).group(1))
        base=re.search(r'min_rtt=Some\(([\d.]+)(ms|s)',line); b=float(base.group(1))*(1000 if base.group(2)=='s' else 1) if base else float('nan')
        cur.setdefault(isn,[]).append((t-t0,ph,bw,b))
    return seeds
for fn in sys.argv[1:]:
    seeds=parse(fn)
    ex=[[] for _ in range(4)]; bases=[[] for _ in range(4)]; st=[[] for _ in range(4)]
    for s in seeds:
        for i,(isn,rows) in enumerate(s.items()):
            if i>3: break
            first=[r for r in rows if r[1]!='Startup']
            if first: ex[i].append(first[0][2]); bases[i].append(first[0][3]); st[i].append(first[0][0]-rows[0][0])
    print(fn,'start-up exit bw median',[round(statistics.median(x)) for x in ex],'base at exit',[round(statistics.median(x)) for x in bases],'start-up secs',[round(statistics.median(x),2) for x in st])
