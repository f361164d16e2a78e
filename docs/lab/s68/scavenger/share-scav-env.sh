for i in $(seq 1 ${N:-3}); do
  for arm in A B; do
    echo "== $arm run $i"
    if [ $arm = A ]; then
      (cd /work/main && HAUL=/tmp/w/s68/haul-scav POLICIES=scavenger RTTS="30ms" SECS=60 sh bench/share.sh 2>&1)
    else
      (cd /work/main && SCAVRISE=1 HAUL=/tmp/w/s68/haul-scav POLICIES=scavenger RTTS="30ms" SECS=60 sh bench/share.sh 2>&1)
    fi
  done
done
