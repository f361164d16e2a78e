#!/bin/sh
# A/B of two binaries taking turns, four flows a second apart at 300 ms. Session 63's set 3:
# A = the build before (3cc0bdb; the scratch binary with no switches), B = the landed build.
# Session 64 ran it with A=4973e91, B=the base renewal, T=20 (twice as long). Session 65 also
# ran eight flows at 100 ms: P=8 RTT=100ms.
A=${A:-/tmp/w/s63/haul2}
B=${B:-/tmp/w/s63/haul-landed}
N=${N:-12}
T=${T:-10}
D=${D:-/tmp/w/s63/lab/landed}
P=${P:-4}
RTT=${RTT:-300ms}
mkdir -p $D; cd $D
for i in $(seq 1 $N); do
  for arm in A B; do
    if [ $arm = A ]; then H=$A; else H=$B; fi
    $H lab link --rate 100M --rtt $RTT --server "exec $H perf -s >/dev/null 2>&1" -- \
      sh -c "$H perf -c 10.77.0.2 -P $P -t $T --omit 10 --stagger 1s --interval 0.1 --json 2>/dev/null" \
      > $arm-$i.json 2> $arm-$i.err
  done
done
echo done > $D/finished
