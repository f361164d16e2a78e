import re,sys,statistics
for f in sys.argv[1:]:
    rows=[list(map(float,m.group(1).split())) for m in re.finditer(r'started ([\d. ]+)',open(f).read())]
    n=len(rows[0]); least=[0]*n
    for r in rows: least[r.index(min(r))]+=1
    print(f,len(rows),'medians',[round(statistics.median(r[i] for r in rows),1) for i in range(n)],'least',least)
