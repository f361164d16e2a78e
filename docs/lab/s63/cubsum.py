import re,sys,statistics as st
for f in sys.argv[1:]:
    for rtt in ('30','100'):
        run=[];end=[]
        for l in open(f):
            m=re.search(rf'{rtt} ms, seed (\d+): CUBIC +([\d.]+) \( *([\d.]+) in the last \d+ s\), haul +([\d.]+) \( *([\d.]+)\)',l)
            if m: run.append(float(m.group(4))); end.append(float(m.group(5)))
        if run: print(f"{f} {rtt} ms: {len(run)} seeds, haul over the run {min(run):.1f}-{max(run):.1f} (mean {st.mean(run):.1f}, under 25: {sum(x<25 for x in run)}); last 100 s {min(end):.1f}-{max(end):.1f} (under 25: {sum(x<25 for x in end)})")
