#!/bin/sh
# Instructions per packet of the sans-IO core's data path (write, cut, gather, parse, receive
# buffer, read, ACKs, timers), counted by callgrind: deterministic, blind to the machine's noise.
# Runs the `data_path` benchmark (crates/haul-proto/benches) at two sizes and divides the
# difference by the difference in packets, so set-up cancels out.
#     sh bench/callgrind.sh            print the figure
#     sh bench/callgrind.sh --check    also fail if it exceeds bench/callgrind-budget (CI)
# Needs valgrind (apt-get install valgrind).
set -eu
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
count() {
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$1" "$BIN" "$1" >/dev/null 2>"$OUT/log.$1"
  sed -n 's/^summary: //p' "$OUT/cg.$1"
}
SMALL=20000
LARGE=60000
A=$(count $SMALL)
B=$(count $LARGE)
PER=$(( (B - A) / (LARGE - SMALL) ))
echo "sans-IO data path: $PER instructions per packet (callgrind, $SMALL and $LARGE packets of 1456 bytes)"
if [ "${1:-}" = "--check" ]; then
  BUDGET=$(grep -v '^#' bench/callgrind-budget | head -n1)
  if [ "$PER" -gt "$BUDGET" ]; then
    echo "callgrind.sh: $PER instructions per packet exceeds the budget of $BUDGET (bench/callgrind-budget)" >&2
    exit 1
  fi
  echo "within the budget of $BUDGET"
fi
