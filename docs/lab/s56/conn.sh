#!/bin/sh
# conn.sh RTT LOSS RUNS: connect_seconds of haul perf, builds and dialects taking turns.
RTT=$1; LOSS=$2; RUNS=$3
for i in $(seq 1 $RUNS); do
  for b in old new; do
    for d in haul udt4 tcp; do
      case $d in
        haul) extra="--key-file /tmp/w/key"; sextra="--key-file /tmp/w/key";;
        udt4) extra=""; sextra="";;
        tcp) extra="--tcp"; sextra="";;
      esac
      [ $d = tcp ] && [ $b = old ] && continue
      out=$(/tmp/w/haul-$b lab link --rate 1G --rtt $RTT --loss $LOSS --seed $((i + ${SEED0:-0})) --server "exec /tmp/w/haul-$b perf -s $sextra >/dev/null 2>&1" -- /tmp/w/haul-$b perf -c 10.77.0.2 --bytes 1M --json $extra 2>/dev/null | tail -1)
      c=$(echo "$out" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["connect_seconds"],4))' 2>/dev/null)
      echo "$RTT $LOSS run$i $b $d connect_s=$c"
    done
  done
done
