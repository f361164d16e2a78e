#!/bin/sh
# Two haul builds side by side in `haul lab compare`, one cell at a time, taking turns, so that
# the shared machine's noise falls on both alike. Prints one line per run:
#   build round rate_mbit rtt_ms loss goodput_mbit startup_s
# and keeps each run's results under OUT. Needs root (network namespaces). Not a test: it
# measures.
#
#   sudo ROUNDS="1 2" TIME=4s sh bench/lab_ab.sh /tmp/haul-old target/release/haul /tmp/ab \
#       "1G 300ms 1%" "100M 10ms 5%"
#
# OMIT=S leaves the first S seconds out of the goodput (the steady state, `--omit`).
set -eu
if [ $# -lt 4 ]; then
    echo "usage: lab_ab.sh OLD_HAUL NEW_HAUL OUT 'RATE RTT LOSS'..." >&2
    exit 2
fi
old=$1 new=$2 out=$3
shift 3
mkdir -p "$out"
for round in ${ROUNDS:-1 2}; do
    for cell in "$@"; do
        set -f
        # shellcheck disable=SC2086
        set -- $cell "$@"
        rate=$1 rtt=$2 loss=$3
        shift 3
        set +f
        for build in old new; do
            if [ "$build" = old ]; then haul=$old; else haul=$new; fi
            dir="$out/$build-$rate-$rtt-$loss-$round"
            "$haul" lab compare --rates "$rate" --rtts "$rtt" --losses "$loss" \
                --transports haul --time "${TIME:-4s}" --omit "${OMIT:-0}" --out "$dir" >/dev/null 2>"$dir.log" ||
                { echo "$build $round $rate $rtt $loss failed: see $dir.log" >&2; continue; }
            tail -n 1 "$dir/results.csv" |
                awk -F, -v b="$build" -v r="$round" '{ print b, r, $3, $4, $5, $6, $9 }'
        done
    done
done
