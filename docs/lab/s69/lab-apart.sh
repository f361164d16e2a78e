#!/bin/sh
# A/B of two binaries taking turns, as flows from different hosts: P separate `haul perf`
# clients (each its own endpoint, so they share no record; each to its own server, which runs
# one test at a time), started a second apart at RTT over 100 Mbit/s, each measured over the
# same span, 10–20 s after the first start.
#   A=old/haul B=new/haul N=3 D=out-dir [P=4 RTT=300ms C=third/haul] sh docs/lab/s69/lab-apart.sh
#   python3 docs/lab/s69/apartsum.py D/A-*  (and D/B-*, D/C-*)
# With C set (since session 78), a third build takes its turn after B. GAP (seconds, default 1;
# since session 86) is the time between the clients' starts.
GAP=${GAP:-1}; A=${A:?}; B=${B:?}; N=${N:-3}; D=${D:?}; P=${P:-4}; RTT=${RTT:-300ms}; C=${C:-}
mkdir -p "$D"
for i in $(seq 1 "$N"); do
  for arm in A B ${C:+C}; do
    case $arm in A) H=$A ;; B) H=$B ;; C) H=$C ;; esac
    out="$D/$arm-$i"; mkdir -p "$out"
    cat > "$out/clients.sh" <<INNER
#!/bin/sh
for k in \$(seq 0 $((P - 1))); do
  $H perf -c 10.77.0.2:\$((5300 + k)) -t 10 --omit \$((10 - k)) --interval 0.1 --json > $out/flow-\$k.json 2>/dev/null &
  sleep $GAP
done
wait
INNER
    servers=""
    for k in $(seq 0 $((P - 1))); do servers="$servers $H perf -s -p $((5300 + k)) >/dev/null 2>&1 &"; done
    $H lab link --rate 100M --rtt "$RTT" --server "$servers wait" -- \
      sh "$out/clients.sh" 2> "$out/link.err"
  done
done
echo done > "$D/finished"
