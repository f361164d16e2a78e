# gridtab.py RESULTS.json: the LAB.md table of a `haul lab compare` grid of haul and bbr, then the extremes.
import json,sys,statistics as st
j=json.load(open(sys.argv[1]))
cells={}
for r in j:
    k=(r['rate_bps'],r['rtt_ms'],r['loss'])
    cells.setdefault(k,{}).setdefault(r['transport'],[]).append(r)
print("| rate | RTT | loss | haul: mean (runs) | haul efficiency | haul start-up / link (s) | BBR: mean (runs) | haul ÷ BBR | RTT inflation, haul / BBR (%) |")
print("|---|---|---|---|---|---|---|---|---|")
def f(v,big): return ("%.0f"%v) if big else ("%.1f"%v)
effs=[];ratios=[];allwin=True;rtts=[]
for k in sorted(cells):
    rate,rtt,loss=k; big=rate>=1e9
    h=cells[k]['haul']; b=cells[k]['bbr']
    hg=[x['goodput_bps']/1e6 for x in h]; bg=[x['goodput_bps']/1e6 for x in b]
    hm=st.mean(hg); bm=st.mean(bg)
    effs+= [x['efficiency'] for x in h]; ratios.append((loss,hm/bm)); rtts+=[x['rtt_inflation'] for x in h]
    if loss>0 and min(hg)<max(bg): allwin=False
    print("| %s | %d ms | %d %% | **%s** (%s) | %s | %s | **%s** (%s) | %.2f | %s / %s |"%(
        "1 Gbit/s" if big else "100 Mbit/s", rtt, round(loss*100), f(hm,big), ", ".join(f(x,big) for x in hg),
        ", ".join("%.3f"%x['efficiency'] for x in h),
        ", ".join("%.1f / %.1f"%(x["startup_s"],x["link_startup_s"] or -1) for x in h),
        f(bm,big), ", ".join(f(x,big) for x in bg), hm/bm,
        ", ".join("%+d"%round(x['rtt_inflation']*100) for x in h), ", ".join("%+d"%round(x['rtt_inflation']*100) for x in b)))
print("eff", min(effs), max(effs)); print("lossy ratio", min(r for l,r in ratios if l>0), max(r for l,r in ratios if l>0)); print("clean", min(r for l,r in ratios if l==0), max(r for l,r in ratios if l==0)); print("every haul run above every bbr run in lossy:", allwin); print("rtt", min(rtts), max(rtts))
