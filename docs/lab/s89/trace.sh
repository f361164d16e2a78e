#!/bin/sh
# trace.sh BIN SEED FLOWS RTT TAG [apart]
BIN=$1; S=$2; F=$3; R=$4; TAG=$5
if [ "$6" = apart ]; then J=""; else J="FAIR_JITTER=1"; fi
env HAUL_LOG=haul_proto::cc=debug,haul_proto::cc::model=trace NO_COLOR=1 FAIR_SHARE_RTT=0 FAIR_FLOWS=$F FAIR_RTT=$R FAIR_FIRST_SEED=$S FAIR_SEEDS=1 FAIR_RATES=1 $J $BIN fairness_across_seeds --ignored --nocapture --test-threads 1 > $TAG.out 2> $TAG.log
python3 /work/main/bench/rounds.py $TAG.log > $TAG.rounds
