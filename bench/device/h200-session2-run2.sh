export BIN=$PWD/build/lead-carry; export PATH=$BIN:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
OUT=$OUT bash bench/device/h200-sampler-cost.sh table nohalves noactive halves tpcfma smact warps l1fill mem tensor > $OUT/cost.log 2>&1
OUT=$OUT bash bench/device/h200-counter-probe.sh replay > $OUT/probe.log 2>&1
mkdir -p /tmp/r2/gemm /tmp/r2/copy /tmp/r2/agent
timeout 60 diescope run --window markers --report /tmp/r2/gemm -- diescope workload gemm --seconds 3 > /tmp/r2/gemm/stdout.txt 2> /tmp/r2/gemm/stderr.txt
timeout 60 diescope run --window markers --report /tmp/r2/copy -- diescope workload stream --kernel copy --seconds 3 > /tmp/r2/copy/stdout.txt 2> /tmp/r2/copy/stderr.txt
diescope workload ffma --seconds 14 > /tmp/r2/agent/ffma.txt 2>&1 &
sleep 1; timeout -s TERM 12 diescope agent --no-db --no-listen --ndjson --duty-on-ms 5000 --duty-period-ms 5000 > /tmp/r2/agent/records.ndjson 2> /tmp/r2/agent/stderr.txt; echo "agent rc=$?" >> /tmp/r2/agent/stderr.txt
wait
find /tmp/r2 -name samples.csv -o -name '*.html' -o -name '*trace*' | xargs rm -f
tar czf $OUT/r2.tgz -C /tmp/r2 .
cat $OUT/cost.log | tail -12; tail -8 $OUT/probe.log; cat /tmp/r2/gemm/stdout.txt | head -20; tail -3 /tmp/r2/agent/stderr.txt; wc -l /tmp/r2/agent/records.ndjson
