#!/usr/bin/env bash
# ResNet-50 training (resnet50_steps.py: 2 warm-up steps and 1 step, batch 32) through the roofline
# backends on a GPU machine, and where their DRAM bytes differ (docs/roofline.md#the-sampled-backend):
#   1. the range profiler (`--profiler range`) over all three steps: every step's regions must have
#      figures, not only the first's (the later steps' ranges were once left unrecorded by CUPTI);
#   2. the sampled backend on the same script;
#   3. the range library alone, with DRAM bytes read and written apart, on the same pipelined run;
#   4. ncu on the last step, DRAM bytes read and written and kernel time per launch, once with its
#      default cache control (caches flushed before every kernel: `all`) and once without (`none`).
# resnet50_bytes.py OUT_DIR makes the per-region table from what this writes into OUT_DIR:
# range.csv, sampled.csv (roofline tables), split-range.txt (the library's own file), ncu-all.csv,
# ncu-none.csv (ncu's raw pages), each step's output (NAME.txt) and env.txt.
#
#   bench/roofline/resnet50_backends.sh BIN OUT_DIR      BIN holds diescope, diescope-cupti and
#                                                        libdiescope-range.so
set -uo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "$0")/../common.sh"  # bench_bin_dir, bench_step
bench_bin_dir resnet50_backends.sh "${1:-}" "${2:-}" diescope diescope-cupti libdiescope-range.so
python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)" \
  >> "$out/env.txt" 2>&1
ds="$bin/diescope"
lib="$bin/libdiescope-range.so"
here=$(cd "$(dirname "$0")" && pwd)
steps=(python3 "$here/resnet50_steps.py" --warmup 2 --steps 1 --batch 32)

# 1. and 2. The range profiler and the sampled backend, through diescope.
bench_step range 150 "$ds" roofline profile --profiler range -O lib="$lib" --output "$work/range" --timeout 140 \
  -- "${steps[@]}"
cp "$work/range/roofline.csv" "$out/range.csv" 2>/dev/null
bench_step sampled 90 "$ds" roofline profile --profiler sampled -O lib="$lib" --output "$work/sampled" --timeout 80 \
  -- "${steps[@]}"
cp "$work/sampled/roofline.csv" "$out/sampled.csv" 2>/dev/null
cp "$work/sampled/"*.sampled-windows.tsv "$out/" 2>/dev/null

# 3. The library alone: one pass group of DRAM bytes read and written (the variables diescope sets).
split=dram__bytes_read.sum,dram__bytes_write.sum,dram__bytes.sum,gpu__time_duration.sum
bench_step split-range 60 env DIESCOPE_RANGE_OUTPUT="$out/split-range.txt" DIESCOPE_RANGE_METRICS="$split" \
  DIESCOPE_RANGE_GROUP=0 CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" "${steps[@]}"

# 4. ncu on the last step (the script starts the profiler after its warm-up steps).
for cache in all none; do
  bench_step "ncu-$cache" 200 ncu --clock-control none --cache-control "$cache" --nvtx --profile-from-start off \
    --metrics "$split" --export "$work/ncu-$cache" --force-overwrite "${steps[@]}"
  ncu --import "$work/ncu-$cache.ncu-rep" --csv --page raw > "$out/ncu-$cache.csv" 2>> "$out/ncu-$cache.txt"
done
echo "raw outputs kept in $work"
