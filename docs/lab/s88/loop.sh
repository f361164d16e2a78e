#!/bin/sh
# loop.sh H OUTDIR N : traced lone-flow runs at 100M/100ms/1%
H=$1; D=$2; N=$3; mkdir -p $D
L="haul_proto::cc=debug,haul_proto::cc::model=trace,haul_proto::conn=trace"
for i in $(seq 1 $N); do
  $H lab link --rate 100M --rtt 100ms --loss 1% --server "env HAUL_LOG=$L NO_COLOR=1 $H perf -s -p 5300 >/dev/null 2>$D/srv$i.log" -- sh -c "HAUL_LOG=$L NO_COLOR=1 $H perf -c 10.77.0.2:5300 -t 5 --json > $D/r$i.json 2> $D/c$i.log" >/dev/null 2>&1
  python3 -c "import json; j=json.load(open(\"$D/r$i.json\")); print($i, round(j[\"bits_per_second\"]/1e6,1))" || echo "$i ?"
done
