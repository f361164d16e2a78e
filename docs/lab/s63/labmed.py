import re,sys,statistics as st
for f in sys.argv[1:]:
    J=[];R=[];D=[]
    for l in open(f):
        m=re.search(r'Jain ([\d.]+), RTT ([+-]\d+) %.*drops (\d+)',l)
        if m: J.append(float(m.group(1)));R.append(int(m.group(2)));D.append(int(m.group(3)))
    print(f"{f}: n={len(J)} Jain median {st.median(J):.3f} (>=0.98: {sum(j>=0.98 for j in J)}, least {min(J):.3f}); RTT median {st.median(R):+.0f} % (<=10: {sum(r<=10 for r in R)}); drops median {st.median(D):.0f}")
