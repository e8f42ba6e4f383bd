#!/usr/bin/env python3
"""Which cuBLAS bf16 GEMM sizes run into the power limit: for each size, the GEMM back to back for
--seconds while nvidia-smi reads the SM clock, the power draw and the software power cap reason once
--query-at seconds in. Reads the GPU's state; sets nothing.

The GEMM is torch.mm replayed from a CUDA graph of several launches (gemm_graph): a small size takes
a few microseconds on the GPU, less than Python needs to launch it, and launched one by one it would
time the host rather than the GPU.

    python3 bench/agent/gemm_power_probe.py --sizes 8192,4096,2048,1536,1024 [--seconds 2.5]

Prints one CSV row per size (n, ms per launch, TFLOP/s, SM MHz, watts, sw_power_cap) and, last, the
line `pick N`: the largest size whose reading showed no power cap (the smallest size when every one
did), for bench/agent/cost_events.py --gemm-n.
"""
import argparse
import subprocess
import sys
import threading
import time

import torch


def query():
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.sw_power_cap",
                          "--format=csv,noheader,nounits", "-i", "0"], capture_output=True, text=True, timeout=10)
    return [f.strip() for f in out.stdout.strip().split(",")] if out.returncode == 0 else ["nan", "nan", "?"]


def gemm_graph(n, per_replay=None):
    """A bf16 n x n GEMM as a callable that replays a CUDA graph of per_replay torch.mm launches,
    and the number of GEMMs one call runs. per_replay defaults to enough launches for about 0.5 ms."""
    m = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    if per_replay is None:
        per_replay = max(1, min(64, round(0.5e-3 / (2 * n ** 3 / 400e12))))  # at about 400 TFLOP/s
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # cuBLAS picks its kernel (and workspace) before the capture
        for _ in range(3):
            torch.mm(m, k, out=c)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(per_replay):
            torch.mm(m, k, out=c)
    torch.cuda.synchronize()
    return graph.replay, per_replay


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="8192,4096,2048,1536,1024")
    p.add_argument("--seconds", type=float, default=2.5)
    p.add_argument("--query-at", type=float, default=1.5)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("gemm_power_probe: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    print("n,ms_per_launch,tflops,sm_mhz,power_w,sw_power_cap")
    capped = {}
    for n in [int(x) for x in a.sizes.split(",")]:
        replay, per_replay = gemm_graph(n)
        replay()
        torch.cuda.synchronize()
        reading = {}
        timer = threading.Timer(a.query_at, lambda: reading.update(v=query()))
        start = time.perf_counter()
        timer.start()
        launches = 0
        while time.perf_counter() - start < a.seconds:
            for _ in range(8):
                replay()
            launches += 8 * per_replay
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        timer.join()
        ms = elapsed / launches * 1000
        sm, watts, cap = reading.get("v", ["nan", "nan", "?"])
        capped[n] = cap != "Not Active"
        print(f"{n},{ms:.4f},{2 * n ** 3 / (ms / 1000) / 1e12:.1f},{sm},{watts},{cap}", flush=True)
    free = [n for n in capped if not capped[n]]
    print(f"pick {max(free) if free else min(capped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
