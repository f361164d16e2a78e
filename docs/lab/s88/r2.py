import re,sys,glob
def t(s): 
    m=re.search(r'now=Instant \{ tv_sec: (\d+), tv_nsec: (\d+) \}',s); return int(m[1])+int(m[2])/1e9
for f in sorted(glob.glob(sys.argv[1]+'/c*.log'), key=lambda x:int(re.findall(r'\d+',x.split('/')[-1])[0])):
    rounds=[]; acks=[]
    for l in open(f):
        if 'model round' in l:
            rounds.append((t(l), int(re.search(r' sent_all=(\d+)',l)[1]), re.search(r'phase=(\w+)',l)[1]))
        elif 'scratch ack in' in l and 'rates=Some' in l:
            acks.append((t(l), int(re.search(r'recv_rate: (\d+)',l)[1])))
        if len(rounds)>=4: break
    # rounds[0]=start, [1]=end r1, [2]=end r2, [3]=end r3
    for k in (2,3):
      if len(rounds)<=k: break
      r0,r1,r2=rounds[k-2],rounds[k-1],rounds[k]
      before=r1[1]/(r1[0]-r0[0])
      span=r2[0]-r1[0]
      rep=[(a,r) for a,r in acks if r1[0]<a<=r2[0]]
      prev=[a for a,r in acks if a<=r1[0]]
      last=prev[-1] if prev else None
      mean=sum(r for a,r in rep if r>0)/max(1,len([1 for a,r in rep if r>0]))
      w=0;tt=0
      for a,r in rep:
          if last is not None: w+=r*(a-last); tt+=a-last
          last=a
      print(f.split('/')[-1], k, 'before %.0f mean %.0f (%.2f) weighted %.0f (%.2f) pkts %.0f vs %.0f n=%d phase %s'%(before,mean,mean/before,w/tt if tt else 0,(w/tt/before) if tt else 0, w, before*span, len(rep), r2[2]))
