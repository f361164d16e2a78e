import re,statistics,sys
for f in sys.argv[1:]:
    t=open(f).read()
    for m in re.finditer(r'(\d) flows (\d+) ms: ([^\n]*?)(?=\d flows|\n|$)',t):
        vals=[v.split('/') for v in m.group(3).split()]
        j=[float(v[0]) for v in vals]; q=[float(v[2]) for v in vals]
        print(f, m.group(1),m.group(2),len(j),'jain med %.3f min %.3f'%(statistics.median(j),min(j)),'<.98:',sum(x<0.98 for x in j),'rtt med %+.2f max %+.2f >=.2: %d'%(statistics.median(q),max(q),sum(x>=0.2 for x in q)), 'eff med %.3f'%statistics.median(float(v[3]) for v in vals))
