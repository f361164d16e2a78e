import re,sys,statistics as st
def load(p):
    t=open(p,errors="replace").read()
    m=re.findall(r"\d+ flows \d+ ms: ([^\n]*)",t)
    return [tuple(float(x) for x in s.split("/")) for s in m[-1].split()]
for p in sys.argv[1:]:
    r=[x[2] for x in load(p)]
    print(p, "mean %.4f median %.3f  >=0.1: %d >=0.2: %d"%(st.mean(r),st.median(r),sum(x>=0.1 for x in r),sum(x>=0.2 for x in r)))
