#!/bin/sh
# ab.sh N : taking turns HEAD (haul-scratch) and A
for i in $(seq 1 $1); do
  ./loop1.sh ./haul-scratch /tmp/w/s88/abH $i
  ./loop1.sh ./haul-A /tmp/w/s88/abA $i
done
