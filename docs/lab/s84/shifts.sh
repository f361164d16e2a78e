#!/bin/sh
# usage: shifts.sh BIN OUTDIR  — stall recovery at every phase of the cycle, 12 seeds each
B=$1; D=$2; mkdir -p $D
for rtt in 100 10; do
  if [ $rtt = 100 ]; then step=120; else step=20; fi
  i=0
  while [ $i -lt 8 ]; do
    sh=$((i*step))
    STALL_SHIFT_MS=$sh STALL_RTT=$rtt STALL_SEEDS=12 $B stall_recovery_across_seeds --ignored --nocapture > $D/stall-$rtt-shift-$sh.txt 2>&1 &
    i=$((i+1))
    sh=$((i*step))
    STALL_SHIFT_MS=$sh STALL_RTT=$rtt STALL_SEEDS=12 $B stall_recovery_across_seeds --ignored --nocapture > $D/stall-$rtt-shift-$sh.txt 2>&1
    wait
    i=$((i+1))
  done
done
