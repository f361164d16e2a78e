#!/bin/sh
# batch.sh BIN TAG: the other cells
B=$1; T=$2
./run.sh $B $T-two-j300.txt 2 300 17 96 & ./run.sh $B $T-two-j300-113.txt 2 300 113 192; wait
./run.sh $B $T-four-a300.txt 4 300 17 96 apart & ./run.sh $B $T-four-j100.txt 4 100 17 96; wait
./run.sh $B $T-four-j10.txt 4 10 17 96 & ./run.sh $B $T-two-j100.txt 2 100 17 96; wait
env FAIR_FLOWS=8 FAIR_RTT=300 FAIR_FIRST_SEED=17 FAIR_SEEDS=24 FAIR_RATES=1 $B fairness_across_seeds --ignored --nocapture --test-threads 1 > $T-sib8-300.txt 2>&1 &
env CUBIC_RTT=100 CUBIC_FIRST_SEED=1 CUBIC_SEEDS=48 CUBIC_SECS=120 CUBIC_END_SECS=100 $B beside_cubic_across_seeds --ignored --nocapture --test-threads 1 > $T-cubic.txt 2>&1; wait
$B startup_grid --ignored --nocapture --test-threads 1 > $T-startup-grid.txt 2>&1
echo done > $T-done
