#!/usr/bin/env python3
"""Which cuBLAS bf16 GEMM sizes run into the power limit: for each size, torch.mm back to back for
--seconds while nvidia-smi reads the SM clock, the power draw and the software power cap reason once
--query-at seconds in. Reads the GPU's state; sets nothing.

    python3 bench/agent/gemm_power_probe.py --sizes 8192,4096,2048 [--seconds 2.5]

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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="8192,4096,2048")
    p.add_argument("--seconds", type=float, default=2.5)
    p.add_argument("--query-at", type=float, default=1.5)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("gemm_power_probe: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    print("n,ms_per_launch,tflops,sm_mhz,power_w,sw_power_cap")
    capped = {}
    for n in [int(x) for x in a.sizes.split(",")]:
        m = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            torch.mm(m, k, out=c)
        torch.cuda.synchronize()
        reading = {}
        timer = threading.Timer(a.query_at, lambda: reading.update(v=query()))
        start = time.perf_counter()
        timer.start()
        launches = 0
        while time.perf_counter() - start < a.seconds:
            for _ in range(8):
                torch.mm(m, k, out=c)
            launches += 8
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
