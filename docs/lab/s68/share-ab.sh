#!/bin/sh
# A/B of haul beside one CUBIC flow (bench/share.sh, 60 s), taking turns: N runs each of the
# binaries A and B, for POLICIES (fair) at RTTS (30ms 100ms).
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
for i in $(seq 1 ${N:-2}); do
  for arm in A B; do
    if [ $arm = A ]; then H=$A; else H=$B; fi
    echo "== $arm run $i"
    (cd "$ROOT" && HAUL=$H POLICIES="${POLICIES:-fair}" RTTS="${RTTS:-30ms 100ms}" SECS=60 sh bench/share.sh 2>&1)
  done
done
