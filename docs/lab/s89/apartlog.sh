#!/bin/sh
# apartlog.sh HAUL OUTDIR: one four-client run a second apart at 300 ms, clients traced
H=$1; out=$2; P=4; mkdir -p $out
cat > "$out/clients.sh" <<INNER
#!/bin/sh
for k in \$(seq 0 $((P - 1))); do
  HAUL_LOG=haul_proto::cc=debug NO_COLOR=1 $H perf -c 10.77.0.2:\$((5300 + k)) -t 10 --omit \$((10 - k)) --interval 0.1 --json > $out/flow-\$k.json 2>$out/flow-\$k.log &
  sleep 1
done
wait
INNER
servers=""
for k in $(seq 0 $((P - 1))); do servers="$servers $H perf -s -p $((5300 + k)) >/dev/null 2>&1 &"; done
$H lab link --rate 100M --rtt 300ms --server "$servers wait" -- sh "$out/clients.sh" 2> "$out/link.err"
