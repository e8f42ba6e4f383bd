#!/usr/bin/env python3
"""FMA-bound work from PyTorch's jiterator (NVRTC): FP32 (FFMA) or FP64 (DFMA), for the GPM vs PM
sampling cross-check (bench/run/gpm_device.sh), whose bundled workloads have no DFMA. Each thread runs
two dependent multiply-add chains; four full waves (2048 threads per SM) keep every SM busy.

    python3 bench/run/jit_fma.py --dtype float64 --seconds 3

Prints 'diescope: measure start' and 'diescope: measure stop' around the timed window, then one line
with the FMA rate over CUDA-event time. Also imported by bench/agent/cost_events.py.
"""
import argparse
import sys

import torch

CODE = """
template <typename T> T fma_chain(T x, T y) {
  T a = x;
  T b = y;
  for (int i = 0; i < 8192; ++i) {
    a = a * b + x;
    b = b * a + y;
  }
  return a + b;
}
"""
FMAS_PER_ELEMENT = 2 * 8192


def make(dtype, sms=None):
    props = torch.cuda.get_device_properties(0)
    n = (sms or props.multi_processor_count) * 2048 * 4
    fn = torch.cuda.jiterator._create_jit_fn(CODE)
    x = torch.full((n,), 0.5, device="cuda", dtype=dtype)
    y = torch.full((n,), 0.25, device="cuda", dtype=dtype)

    def launch():
        fn(x, y)  # the result is allocated per launch (the caching allocator reuses it)

    return launch, n * FMAS_PER_ELEMENT


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--seconds", type=float, default=3)
    a = p.parse_args()
    dtype = getattr(torch, a.dtype)
    launch, fmas = make(dtype)
    for _ in range(3):
        launch()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    launch()
    t1.record()
    torch.cuda.synchronize()
    per_launch_s = t0.elapsed_time(t1) / 1000
    launches = max(1, int(a.seconds / per_launch_s))
    print("diescope: measure start", flush=True)
    t0.record()
    for _ in range(launches):
        launch()
    t1.record()
    torch.cuda.synchronize()
    print("diescope: measure stop", flush=True)
    s = t0.elapsed_time(t1) / 1000
    print(f"jit_fma {a.dtype}: {launches} launches in {s:.3f} s, {launches * fmas / s / 1e12:.3f} TFMA/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
