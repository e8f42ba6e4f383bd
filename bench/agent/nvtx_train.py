#!/usr/bin/env python3
"""A training loop with NVTX ranges, for the capture benchmark (bench/agent/capture_nvtx_interval.sh).

A four-layer bf16 MLP (4096 -> 8192 -> 8192 -> 8192 -> 10, batch 4096) trains on one synthetic batch.
Every step is an NVTX range "step" holding "forward", "backward" and "optimizer" (torch.cuda.nvtx, so
the calls reach whatever tool NVTX_INJECTION64_PATH names), and every 10th step also holds "eval", a
forward pass without gradients. The step synchronises at its end (loss.item()), so each range's CPU
time spans its GPU work. Prints "start" once, then one line per second: elapsed seconds and steps in
that second; runs --seconds.
"""
import argparse
import sys
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--batch", type=int, default=4096)
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(4096, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 8192), torch.nn.ReLU(),
        torch.nn.Linear(8192, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 10)).to(dev, torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, 4096, device=dev, dtype=torch.bfloat16)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    nvtx = torch.cuda.nvtx
    print("start", flush=True)
    t0 = time.time()
    second, steps, step = 0, 0, 0
    while time.time() - t0 < args.seconds:
        with nvtx.range("step"):
            with nvtx.range("forward"):
                loss = torch.nn.functional.cross_entropy(model(x).float(), y)
            with nvtx.range("backward"):
                loss.backward()
            with nvtx.range("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)
            if step % 10 == 0:
                with nvtx.range("eval"), torch.no_grad():
                    model(x).sum().item()
            loss.item()
        step += 1
        steps += 1
        now = int(time.time() - t0)
        if now > second:
            print(f"{now} {steps}", flush=True)
            second, steps = now, 0
    print(f"done {step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
