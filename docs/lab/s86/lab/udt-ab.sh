#!/bin/sh
# A haul sender (`haul nc`) to the UDT4 reference receiver (`interop/udt_peer.cpp fetch-file`)
# across the lab link, two builds taking turns; prints each fetch's time and checks the bytes.
#   A=old/haul B=new/haul PEER=udt_peer SRC=file [N=3 RATE=50M RTT=300ms] sh udt-ab.sh
# PEER: g++ -O2 -std=c++17 -o udt_peer interop/udt_peer.cpp -ludt -lpthread
A=${A:?}; B=${B:?}; PEER=${PEER:?}; SRC=${SRC:?}
N=${N:-3}; RATE=${RATE:-50M}; RTT=${RTT:-300ms}
LEN=$(wc -c < "$SRC"); OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
for i in $(seq 1 "$N"); do
  for arm in A B; do
    case $arm in A) H=$A ;; B) H=$B ;; esac
    "$H" lab link --rate "$RATE" --rtt "$RTT" \
      --server "$H nc --listen --mode send 10.77.0.2:9000 < $SRC" -- \
      sh -c "sleep 0.5; s=\$(date +%s.%N); $PEER fetch-file 10.77.0.2 9000 $OUT $LEN; e=\$(date +%s.%N); echo \"$arm $i \$(echo \"\$e - \$s\" | bc) s\"" 2>/dev/null
    cmp -s "$OUT" "$SRC" || echo "$arm $i: differs"
  done
done
