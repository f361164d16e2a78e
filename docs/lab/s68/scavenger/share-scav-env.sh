# A/B of the scavenger beside CUBIC at 30 ms, one scratch build (HAUL) with and without its
# SCAVRISE switch, taking turns: N runs each.
for i in $(seq 1 ${N:-3}); do
  for arm in A B; do
    echo "== $arm run $i"
    if [ $arm = A ]; then
      (cd "$(dirname "$0")/../../../.." && HAUL=${HAUL:?a build with the SCAVRISE switch} POLICIES=scavenger RTTS="30ms" SECS=60 sh bench/share.sh 2>&1)
    else
      (cd "$(dirname "$0")/../../../.." && SCAVRISE=1 HAUL=${HAUL:?a build with the SCAVRISE switch} POLICIES=scavenger RTTS="30ms" SECS=60 sh bench/share.sh 2>&1)
    fi
  done
done
