#!/bin/sh
# Instructions per packet of the sans-IO core's data path (write, cut, gather, parse, receive
# buffer, read, ACKs, timers), counted by callgrind: deterministic, blind to the machine's noise.
# Runs the `data_path` benchmark (crates/haul-proto/benches) at two sizes and divides the
# difference in instructions by the difference in packets sent, so set-up cancels out; in the
# plain `udt4` dialect and in the encrypted `haul` one.
#     sh bench/callgrind.sh            print the figures
#     sh bench/callgrind.sh --check    also fail if one exceeds bench/callgrind-budget (CI)
# Needs valgrind (apt-get install valgrind).
set -eu
[ "${1:-}" = "--check" ] && CHECK=1
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 2; }
BIN=$(cargo bench -q --locked -p haul-proto --bench data_path --no-run --message-format=json \
  | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "data_path" and m.get("executable"):
        print(m["executable"])')
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Prints "instructions packets" for a run of $1 packets in dialect $2.
count() {
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" "$BIN" "$1" "$2" >"$OUT/out" 2>"$OUT/log" \
    || { echo "callgrind.sh: the $2 benchmark failed under valgrind:" >&2; cat "$OUT/log" >&2; exit 1; }
  echo "$(sed -n 's/^summary: //p' "$OUT/cg") $(sed -n 's/^packets_sent=//p' "$OUT/out")"
}
FAILED=0
for DIALECT in udt4 haul; do
  set -- $(count 20000 $DIALECT) $(count 60000 $DIALECT)
  PER=$(( ($3 - $1) / ($4 - $2) ))
  echo "$DIALECT dialect: $PER instructions per packet (callgrind, $(( $4 - $2 )) packets of 1 500 bytes)"
  if [ "${CHECK:-}" = 1 ]; then
    BUDGET=$(sed -n "s/^$DIALECT //p" bench/callgrind-budget)
    if [ "$PER" -gt "$BUDGET" ]; then
      echo "callgrind.sh: the $DIALECT dialect's $PER instructions per packet exceed its budget of $BUDGET (bench/callgrind-budget)" >&2
      FAILED=1
    else
      echo "  within its budget of $BUDGET"
    fi
  fi
done
exit $FAILED
