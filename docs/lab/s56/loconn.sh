#!/bin/sh
# loconn.sh ROUNDS: haul perf's connect_seconds on loopback, two builds taking turns, both dialects.
for i in $(seq 1 $1); do
  for b in 74b 91b; do
    for d in plain enc; do
      if [ $d = enc ]; then k="--key-file /tmp/w/key"; else k=""; fi
      (/tmp/w/haul-$b perf -s -p 5299 $k >/dev/null 2>&1 &) ; sleep 0.4
      c=$(/tmp/w/haul-$b perf -c 127.0.0.1 -p 5299 $k -t 0.3 --rate 10M --json 2>/dev/null | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["connect_seconds"]*1e3,2))')
      pkill -f 'perf -s -p 5299'; sleep 0.2
      echo "run$i $b $d $c"
    done
  done
done
