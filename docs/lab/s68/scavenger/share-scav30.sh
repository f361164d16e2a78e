for i in $(seq 1 ${N:-3}); do
  for arm in A B; do
    if [ $arm = A ]; then H=$A; else H=$B; fi
    echo "== $arm run $i"
    (cd /work/main && HAUL=$H POLICIES=scavenger RTTS="30ms" SECS=60 sh bench/share.sh 2>&1)
  done
done
