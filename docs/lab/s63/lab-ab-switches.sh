#!/bin/sh
# A/B with one scratch binary: arm A no switches (= HEAD), arm B with $BENV.
H=/tmp/w/s63/haul
N=${N:-12}
D=${D:-/tmp/w/s63/lab/er}
mkdir -p $D; cd $D
for i in $(seq 1 $N); do
  for arm in A B; do
    if [ $arm = A ]; then E=""; else E="$BENV"; fi
    env $E $H lab link --rate 100M --rtt 300ms --server "exec $H perf -s >/dev/null 2>&1" -- \
      sh -c "$H perf -c 10.77.0.2 -P 4 -t 10 --omit 10 --stagger 1s --interval 0.1 --json 2>/dev/null" \
      > $arm-$i.json 2> $arm-$i.err
  done
done
echo done > $D/finished
