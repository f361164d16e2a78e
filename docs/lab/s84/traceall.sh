#!/bin/sh
# usage: traceall.sh BIN OUT   (two jittered flows, 300 ms, seeds 17-112, 20 s traced)
env FAIR_SHARE_RTT=0 FAIR_FLOWS=2 FAIR_RTT=300 FAIR_FIRST_SEED=17 FAIR_SEEDS=96 FAIR_JITTER=1 FAIR_TRACE=1 FAIR_TRACE_HALVES=40 $1 fairness_across_seeds --ignored --nocapture --test-threads 1 > $2 2>&1
