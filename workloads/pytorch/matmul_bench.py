#!/usr/bin/env python3
"""A PyTorch matmul benchmark that learns its window afterwards, for measuring with diescope.

It warms up, runs timed repetitions of a bf16 matmul, and only then reports: its own result line
(repetitions, seconds, TFLOP/s from the FLOPs it issued) and the window it timed, as diescope reads it
(docs/method.md#a-window-printed-afterwards):

    diescope: measure window START STOP     (--form times: time.time() at the timed part's ends)
    diescope: measure last SECONDS          (--form last: as long as the timed repetitions, printed as
                                            they end; the idle time comes after the line)

It prints no start or stop marker, so the window diescope reports is the one printed here.

    diescope run --window markers -- python3 workloads/pytorch/matmul_bench.py --seconds 5
"""
import argparse
import json
import sys
import time

import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=8192, help="square matrix size (default 8192)")
    parser.add_argument("--seconds", type=float, default=5.0, help="timed part, about (default 5)")
    parser.add_argument("--warmup-seconds", type=float, default=2.0, help="untimed warm-up (default 2)")
    parser.add_argument("--idle-seconds", type=float, default=1.0,
                        help="sleep after the timed part, before reporting (default 1)")
    parser.add_argument("--form", choices=["times", "last"], default="times", help="which window line to print")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("matmul_bench: no CUDA device", file=sys.stderr)
        return 2

    n = args.size
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)

    # Warm-up: cuBLAS picks its kernel, clocks come up. Not part of the window.
    end = time.time() + args.warmup_seconds
    while time.time() < end:
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()

    # One repetition's length, so the timed part is a whole number of repetitions queued back to back.
    t = time.time()
    for _ in range(10):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    per_rep = (time.time() - t) / 10
    reps = max(1, int(args.seconds / per_rep))

    torch.cuda.synchronize()
    start = time.time()
    for _ in range(reps):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    stop = time.time()

    seconds = stop - start
    flops = 2.0 * n * n * n * reps
    result = json.dumps({"benchmark": "matmul_bf16", "size": n, "repetitions": reps, "seconds": round(seconds, 6),
                         "tflops": round(flops / seconds / 1e12, 2), "start": f"{start:.6f}", "stop": f"{stop:.6f}"})
    if args.form == "times":
        # Idle time before the benchmark reports (a teardown): outside the window, which the times fix.
        time.sleep(args.idle_seconds)
        print(result)
        print(f"diescope: measure window {start:.6f} {stop:.6f}")
    else:
        # As llama-bench does: the report comes as the timed part ends, and the window is as long as it.
        print(result)
        print(f"diescope: measure last {seconds:.6f}")
        sys.stdout.flush()
        time.sleep(args.idle_seconds)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
