import re,sys
rows=[]
t0=None
isns=[]
for line in open(sys.argv[1]):
    if 'model round' not in line: continue
    d=dict(re.findall(r'(\w+)=(Some\([^)]*\)|Instant \{[^}]*\}|Jump \{[^}]*\}|\S+)',line))
    m=re.search(r'tv_sec: (\d+), tv_nsec: (\d+)',d['now'])
    t=int(m.group(1))+int(m.group(2))/1e9
    if t0 is None: t0=t
    isn=d['isn']
    if isn not in isns: isns.append(isn)
    def ms(x):
        m=re.search(r'([\d.]+)(ms|s|µs|ns)',x)
        if not m: return float('nan')
        v=float(m.group(1)); u=m.group(2)
        return v*{'ms':1,'s':1000,'µs':1e-3,'ns':1e-6}[u]
    rows.append((t-t0,isns.index(isn),d['phase'],float(d['gain']),d['cycle'],d['draining'],d['foreign'],ms(d['round_min_rtt']),ms(d['min_rtt']),float(d['bw_pps']),float(d['round_sample']),int(d['sent']),d['loss']))
lo=float(sys.argv[2]) if len(sys.argv)>2 else 0; hi=float(sys.argv[3]) if len(sys.argv)>3 else 1e9
flt=int(sys.argv[4]) if len(sys.argv)>4 else -1
for r in rows:
    if lo<=r[0]<=hi and (flt<0 or r[1]==flt):
        print("%6.2f f%d %-8s g%.2f c%s %s %s rtt %6.1f base %6.1f bw %7.0f samp %7.0f sent %5d loss %.3s"%(r[0],r[1],r[2][:8],r[3],r[4],'D' if r[5]=='true' else '-', 'F' if r[6]=='true' else '-',r[7],r[8],r[9],r[10],r[11],r[12]))
