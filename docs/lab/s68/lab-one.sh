#!/bin/sh
# lab-one.sh: A/B of two binaries taking turns, one flow. A B N D RATE RTT LOSS T
A=${A:?}; B=${B:?}; N=${N:-5}; T=${T:-15}; D=${D:?}; RATE=${RATE:-1G}; RTT=${RTT:-10ms}; LOSS=${LOSS:-1%}
mkdir -p $D; cd $D
for i in $(seq 1 $N); do
  for arm in A B; do
    if [ $arm = A ]; then H=$A; else H=$B; fi
    $H lab link --rate $RATE --rtt $RTT --loss $LOSS --server "exec $H perf -s >/dev/null 2>&1" -- \
      sh -c "$H perf -c 10.77.0.2 -t $T --omit 5 --interval 1 --json 2>/dev/null" > $arm-$i.json 2> $arm-$i.err
  done
done
echo done > $D/finished
