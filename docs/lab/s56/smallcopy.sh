#!/bin/sh
# Inside the lab's client namespace: time haul copy of one 4 KiB file, builds taking turns.
SSH="ssh -i /tmp/w/sshb/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
head -c 4096 /dev/urandom > /tmp/w/small.bin
for i in $(seq 1 $RUNS); do
  for b in old new; do
    rm -rf /tmp/w/dest-$b; mkdir -p /tmp/w/dest-$b
    s=$(date +%s.%N)
    /tmp/w/haul-$b copy --quiet --ssh-cmd "$SSH" --remote-haul /tmp/w/haul-$b /tmp/w/small.bin 10.77.0.2:/tmp/w/dest-$b/ || echo FAIL
    e=$(date +%s.%N)
    cmp -s /tmp/w/small.bin /tmp/w/dest-$b/small.bin && ok=ok || ok=DIFF
    echo "run$i $b $(echo "$e - $s" | bc) s $ok"
  done
done
