import re,sys,statistics as st
for p in sys.argv[1:]:
    h=[float(m.group(1)) for m in re.finditer(r"haul +[\d.]+ \( *([\d.]+)\)",open(p).read())]
    c=[float(m.group(1)) for m in re.finditer(r"CUBIC +[\d.]+ \( *([\d.]+) in",open(p).read())]
    print(p,len(h),"haul mean %.1f least %.1f; CUBIC least %.1f"%(st.mean(h),min(h),min(c)))
