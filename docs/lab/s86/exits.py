import re,sys
def load(p):
    text=open(p,errors="replace").read()
    seeds,cur=[],[]
    for line in text.splitlines():
        if re.search(r"seed \d+: Mbit/s in the order the flows started", line):
            seeds.append(cur); cur=[]
        elif "start-up:" in line: cur.append(line)
    jains=[float(x.split("/")[0]) for x in re.findall(r"2 flows \d+ ms: ([^\n]*)", text)[-1].split()]
    out=[]
    for lines,j in zip(seeds,jains):
        r=[float(m.group(1)) for l in lines if (m:=re.search(r"bw=([\d.]+)",l))]
        out.append((r[1] if len(r)>1 else None,j))
    return out
a=load(sys.argv[1]); b=load(sys.argv[2]) if len(sys.argv)>2 else None
for i,(e,j) in enumerate(a):
    jb = b[i][1] if b else ''
    if (e is not None and e<1000) or j<0.98 or (b and jb<0.98):
        print(17+i, e, j, jb)
