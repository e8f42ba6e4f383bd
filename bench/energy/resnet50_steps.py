#!/usr/bin/env python3
"""ResNet-50 AMP training in long steps, each an NVTX range, with NVML's energy counter read by this
program itself at every step boundary: the reference that `diescope run`'s per-step energy is set
against (bench/energy/resnet50_steps.sh, docs/energy.md#checked-on-the-h200).

One step is one optimizer step over --accum micro-batches of --micro images (gradient accumulation),
so that a step lasts seconds: NVML's counter moves in steps of tens of joules, and a boundary read
between two of them is uncertain by up to one. After every step the program synchronises, then reads
the counter (nvml_energy.py: nvmlDeviceGetTotalEnergyConsumption through ctypes) and the time
(CLOCK_REALTIME, time.time_ns, the recording's clock) before and after the call. A thread polls the
counter every 2 ms and keeps each change, which gives the counter's own update period.

FLOPs per micro-batch (forward and backward) come from PyTorch's FlopCounterMode on one micro-batch.

Writes OUT/steps.csv (step, start_ns, end_ns, reference mJ at each end, FLOPs), OUT/counter.csv (the
counter's changes), OUT/env.json; prints the window markers `diescope run --window markers` reads.
"""
import argparse
import csv
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "workloads", "pytorch"))

import torch  # noqa: E402

from resnet50_amp import amp_resnet50  # noqa: E402
from nvml_energy import NvmlEnergy  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--micro", type=int, default=256, help="images per micro-batch")
    p.add_argument("--accum", type=int, default=40, help="micro-batches per step")
    p.add_argument("--steps", type=int, default=12, help="timed steps")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps before the window")
    p.add_argument("--nvml-index", type=int, default=0)
    p.add_argument("--output", required=True)
    args = p.parse_args()
    os.makedirs(args.output, exist_ok=True)
    if not torch.cuda.is_available():
        print("resnet50_steps: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    nvml = NvmlEnergy(args.nvml_index, "resnet50_steps")

    # The counter's changes, polled every 2 ms for the whole run.
    changes = []
    done = threading.Event()

    def poll():
        last = None
        while not done.is_set():
            t, e = time.time_ns(), nvml.millijoules()
            if e != last:
                changes.append((t, e))
                last = e
            time.sleep(0.002)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()

    model, opt, scaler, loss_fn, x, y = amp_resnet50(args.micro)

    def micro_step():
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y) / args.accum
        scaler.scale(loss).backward()

    # FLOPs of one micro-batch's forward and backward, as PyTorch counts them.
    flops_micro = float("nan")
    try:
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as fc:
            micro_step()
        flops_micro = float(fc.get_total_flops())
    except Exception as e:  # an older PyTorch: FLOPs stay unknown
        print("resnet50_steps: FLOPs not counted: %s" % e, file=sys.stderr)
    opt.zero_grad(set_to_none=True)

    def step():
        for _ in range(args.accum):
            micro_step()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()

    def boundary():
        torch.cuda.synchronize()
        t0 = time.time_ns()
        e = nvml.millijoules()
        t1 = time.time_ns()
        return (t0 + t1) // 2, e, t1 - t0

    print("diescope: measure start", flush=True)
    rows = []
    prev = boundary()
    for i in range(args.steps):
        torch.cuda.nvtx.range_push("step %d" % i)
        step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        cur = boundary()
        rows.append({"step": i, "start_ns": prev[0], "end_ns": cur[0], "nvml_start_mj": prev[1],
                     "nvml_end_mj": cur[1], "read_ns": max(prev[2], cur[2]),
                     "flops": flops_micro * args.accum})
        prev = cur
    print("diescope: measure stop", flush=True)
    time.sleep(0.3)
    done.set()
    poller.join()

    with open(os.path.join(args.output, "steps.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.output, "counter.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ts_ns", "energy_mj"])
        w.writerows(changes)
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "micro": args.micro,
           "accum": args.accum, "steps": args.steps, "warmup": args.warmup, "flops_per_micro_batch": flops_micro}
    with open(os.path.join(args.output, "env.json"), "w") as f:
        json.dump(env, f, indent=1)
    print(json.dumps(env), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
