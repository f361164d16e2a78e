#!/bin/sh
# A/B of haul beside one CUBIC flow, taking turns: N runs each, 60 s, 30 and 100 ms.
for i in $(seq 1 ${N:-2}); do
  for arm in A B; do
    if [ $arm = A ]; then H=$A; else H=$B; fi
    echo "== $arm run $i"
    (cd /work/main && HAUL=$H POLICIES=fair RTTS="30ms 100ms" SECS=60 sh bench/share.sh 2>&1)
  done
done
