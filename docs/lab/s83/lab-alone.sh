#!/bin/sh
# A/B of two binaries taking turns: two `haul perf` clients from different hosts (each its own
# endpoint, so they share no record; each to its own server), a second apart at RTT over
# 100 Mbit/s. The first stops after 20 s; the second runs on alone until 40 s.
#   A=old/haul B=new/haul N=3 D=out-dir [RTT=100ms] sh docs/lab/s83/lab-alone.sh
#   python3 docs/lab/s83/alonesum.py D/A-*  (and D/B-*)
A=${A:?}; B=${B:?}; N=${N:-3}; D=${D:?}; RTT=${RTT:-100ms}
mkdir -p "$D"
for i in $(seq 1 "$N"); do
  for arm in A B; do
    case $arm in A) H=$A ;; B) H=$B ;; esac
    out="$D/$arm-$i"; mkdir -p "$out"
    cat > "$out/clients.sh" <<INNER
#!/bin/sh
$H perf -c 10.77.0.2:5300 -t 20 --json > $out/first.json 2>/dev/null &
sleep 1
$H perf -c 10.77.0.2:5301 -t 40 --json > $out/second.json 2>/dev/null
wait
INNER
    servers="$H perf -s -p 5300 >/dev/null 2>&1 & $H perf -s -p 5301 >/dev/null 2>&1 &"
    $H lab link --rate 100M --rtt "$RTT" --server "$servers wait" -- \
      sh "$out/clients.sh" 2> "$out/link.err"
  done
done
echo done > "$D/finished"
