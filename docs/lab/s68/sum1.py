import json,sys,glob,re,os
d=sys.argv[1]
for arm in 'AB':
    rates=[];drops=[]
    for i in range(1,100):
        f=f'{d}/{arm}-{i}.json'
        if not os.path.exists(f): break
        try: j=json.load(open(f))
        except Exception: rates.append(None); continue
        rates.append(round(j['bits_per_second']/1e6,1))
        e=open(f'{d}/{arm}-{i}.err').read()
        m=re.search(r'client→server:.*queue drops (\d+)',e); drops.append(int(m.group(1)) if m else None)
    ok=[r for r in rates if r]; ok.sort()
    print(arm, 'Mbit/s', rates, 'median', ok[len(ok)//2] if ok else None, 'drops', drops)
