#!/bin/sh
# haul sender -> UDT4 reference receiver (fetch-file) across the lab link; times each fetch.
# usage: RATE=50M RTT=300ms N=3 sh udt-ab.sh  (arms: head land2)
N=${N:-3}; RATE=${RATE:-50M}; RTT=${RTT:-300ms}
for i in $(seq 1 $N); do
  for arm in head land2; do
    H=/tmp/w/s86/lab/haul-$arm
    rm -f /tmp/w/s86/lab/out30
    $H lab link --rate $RATE --rtt $RTT --server "$H nc --listen --mode send 10.77.0.2:9000 < /tmp/w/s86/lab/src30" -- \
      sh -c 'sleep 0.5; s=$(date +%s.%N); /tmp/w/s86/lab/udt_peer fetch-file 10.77.0.2 9000 /tmp/w/s86/lab/out30 30000000; e=$(date +%s.%N); echo "'$arm' $i $(echo "$e - $s" | bc) s"' 2>/dev/null
    cmp -s /tmp/w/s86/lab/out30 /tmp/w/s86/lab/src30 || echo "$arm $i: differs"
  done
done
