#!/bin/sh
# A/B of two binaries taking turns: P flows at RTT, started S apart (default together).
A=${A:?}; B=${B:?}; N=${N:-12}; T=${T:-20}; D=${D:?}; P=${P:-4}; RTT=${RTT:-300ms}; S=${S:-0s}
mkdir -p $D; cd $D
for i in $(seq 1 $N); do
  for arm in A B; do
    if [ $arm = A ]; then H=$A; else H=$B; fi
    $H lab link --rate ${RATE:-100M} --rtt $RTT --server "exec $H perf -s >/dev/null 2>&1" -- \
      sh -c "$H perf -c 10.77.0.2 -P $P -t $T --omit 10 --stagger $S --interval 0.1 --json 2>/dev/null" \
      > $arm-$i.json 2> $arm-$i.err
  done
done
echo done > $D/finished
