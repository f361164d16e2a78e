#!/bin/sh
# run.sh BIN OUT FLOWS RTT FIRST SEEDS [apart]
BIN=$1; OUT=$2; F=$3; R=$4; FIRST=${5:-17}; SEEDS=${6:-96}
if [ "$7" = apart ]; then J=""; else J="FAIR_JITTER=1"; fi
env FAIR_SHARE_RTT=0 FAIR_FLOWS=$F FAIR_RTT=$R FAIR_FIRST_SEED=$FIRST FAIR_SEEDS=$SEEDS FAIR_RATES=1 $J $BIN fairness_across_seeds --ignored --nocapture --test-threads 1 > $OUT 2>&1
