#!/bin/sh
# Arms taking turns with one scratch binary ($H, built from scratch.patch): each arm is a set of
# the patch's switches, the arms separated by ';' and named A, B, C... in order. Set 1:
#   ARMS='X=0;ER=1' D=set1 sh lab-arms-switches.sh
# Set 2:
#   ARMS='X=0;QT=2 FP=0.2;QT=2' D=set2 sh lab-arms-switches.sh
# (X=0 sets nothing the patch reads: the build before.)
H=${H:-/tmp/w/s63/haul2}
N=${N:-12}
D=${D:-lab}
mkdir -p "$D"; cd "$D" || exit 1
for i in $(seq 1 "$N"); do
  rest="$ARMS"; arm=A
  while [ -n "$rest" ]; do
    E=${rest%%;*}
    case "$rest" in *';'*) rest=${rest#*;};; *) rest="";; esac
    env $E "$H" lab link --rate 100M --rtt 300ms --server "exec $H perf -s >/dev/null 2>&1" -- \
      sh -c "$H perf -c 10.77.0.2 -P 4 -t 10 --omit 10 --stagger 1s --interval 0.1 --json 2>/dev/null" \
      > "$arm-$i.json" 2> "$arm-$i.err"
    arm=$(echo "$arm" | tr 'A-Y' 'B-Z')
  done
done
