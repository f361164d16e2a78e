for i in 1 2; do
  (cd /work/main && HAUL=/tmp/w/s68/haul-scav2 POLICIES=scavenger RTTS="30ms 100ms" SECS=60 sh bench/share.sh 2>&1)
done
