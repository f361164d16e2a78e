import re,sys,statistics as st
def load(p):
    return {int(m.group(1)):[float(x) for x in m.group(2).split()] for m in re.finditer(r"seed (\d+): Mbit/s in the order the flows started ([\d. ]+)\n",open(p).read())}
A=load(sys.argv[1]);B=load(sys.argv[2])
sa=[sum(v) for v in A.values()]; sb=[sum(v) for v in B.values()]
print("sum median",st.median(sa),st.median(sb)," mean",st.mean(sa),st.mean(sb))
low=[(k,round(sum(A[k]),1),round(sum(B[k]),1)) for k in A if k in B and (sum(B[k])<sum(A[k])-3)]
print("B lower by 3+:",len(low),low[:20])
