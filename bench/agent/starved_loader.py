#!/usr/bin/env python3
"""A small model trained at full speed, then starved by a slow input loader, then at full speed again.

The triggered-capture benchmark's workload (bench/agent/triggered_capture.sh). A four-layer fp32 MLP
(1024 -> 8192 -> 8192 -> 8192 -> 10) trains on synthetic batches from a DataLoader with two worker
processes. Each batch is one dataset item (batch_size=None), so the loader's cost is per batch:

  full     the worker hands out a batch made once at start-up (a copy): the GPU is the limit;
  starved  the worker spends --starve-ms of CPU on every batch (a busy loop, as a decoding or
           augmentation step would): two workers give 1000 / starve-ms * 2 batches a second, far
           fewer than the GPU can take, so it idles waiting for input.

The phases are timed from the script's start (the workers were forked after it, so they share the
clock): full until --full-s, starved for --starve-s, full again for --after-s. One line per second on
stdout: elapsed seconds, phase, steps finished in that second.
"""
import argparse
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

T0 = time.time()


class Batches(Dataset):
    def __init__(self, batch, dim, full_s, starve_s, starve_ms, n):
        self.batch, self.dim, self.n = batch, dim, n
        self.full_s, self.starve_s, self.starve_ms = full_s, starve_s, starve_ms
        self.x = None

    def __len__(self):
        return self.n

    def phase(self):
        t = time.time() - T0
        return "starved" if self.full_s <= t < self.full_s + self.starve_s else "full"

    def __getitem__(self, i):
        if self.x is None:  # made in the worker, once
            g = torch.Generator().manual_seed(1234)
            self.x = torch.randn(self.batch, self.dim, generator=g)
            self.y = torch.randint(0, 10, (self.batch,), generator=g)
        if self.phase() == "starved":
            end = time.perf_counter() + self.starve_ms / 1000.0
            acc = 0
            while time.perf_counter() < end:  # the loader's own CPU work, per batch
                acc += 1
        return self.x.clone(), self.y.clone()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full-s", type=float, default=30)
    ap.add_argument("--starve-s", type=float, default=60)
    ap.add_argument("--after-s", type=float, default=10)
    ap.add_argument("--starve-ms", type=float, default=250)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    total_s = a.full_s + a.starve_s + a.after_s
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 FMA: the FP32 pipe is the unit that works
    model = torch.nn.Sequential(
        torch.nn.Linear(a.dim, a.hidden), torch.nn.ReLU(),
        torch.nn.Linear(a.hidden, a.hidden), torch.nn.ReLU(),
        torch.nn.Linear(a.hidden, a.hidden), torch.nn.ReLU(),
        torch.nn.Linear(a.hidden, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    data = Batches(a.batch, a.dim, a.full_s, a.starve_s, a.starve_ms, n=10**9)
    loader = DataLoader(data, batch_size=None, shuffle=False, num_workers=a.workers, pin_memory=True,
                        prefetch_factor=2, persistent_workers=True)
    print(f"start pid {__import__('os').getpid()} full_s {a.full_s} starve_s {a.starve_s} "
          f"after_s {a.after_s} starve_ms {a.starve_ms}", flush=True)
    steps, last_print, last_steps = 0, time.time(), 0
    for x, y in loader:
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        steps += 1
        now = time.time()
        if now - last_print >= 1.0:
            torch.cuda.synchronize()
            t = now - T0
            print(f"{t:.1f} {data.phase()} {steps - last_steps}", flush=True)
            last_print, last_steps = now, steps
        if now - T0 >= total_s:
            break
    torch.cuda.synchronize()
    print(f"done {steps} steps in {time.time() - T0:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
