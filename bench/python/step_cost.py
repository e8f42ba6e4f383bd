#!/usr/bin/env python3
"""What m.step() costs the training loop (docs/python.md#the-cost-of-step): the time per call of
diescope.measure's step() while a measurement runs, in batches of calls, beside the same loop calling
nothing and calling time.time_ns() alone.

    PYTHONPATH=BUILD/python bench/python/step_cost.py OUT [--calls N] [--batches B]

Runs on a GPU machine, or on a CPU machine with the stand-in NVML and the fake sampler (the collector
runs either way; step() never calls into it). Writes OUT/step_cost.csv (one row per batch and form:
ns per call) and OUT/step_cost.txt (median and the slowest batch per form).
"""
import argparse
import csv
import os
import statistics
import sys
import time

import diescope


def per_call_ns(fn, calls):
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--calls", type=int, default=100000, help="calls per batch")
    p.add_argument("--batches", type=int, default=30)
    p.add_argument("--gpus", default="0")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []

    def nothing():
        pass

    with diescope.measure(gpus=[int(g) for g in args.gpus.split(",")], quiet=True) as m:
        forms = {"nothing": nothing, "time.time_ns": time.time_ns, "m.step": m.step}
        for b in range(args.batches):
            for name, fn in forms.items():  # interleaved, so that drift hits every form alike
                rows.append({"batch": b, "form": name, "ns_per_call": per_call_ns(fn, args.calls)})
        steps_taken = len(m._ts)
    with open(os.path.join(args.out, "step_cost.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["batch", "form", "ns_per_call"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "ns_per_call": "%.1f" % r["ns_per_call"]})
    lines = ["%d batches of %d calls, python %s, %d steps recorded" % (args.batches, args.calls,
             sys.version.split()[0], steps_taken),
             "| form | median ns per call | slowest batch, ns per call |", "| --- | --- | --- |"]
    for name in ("nothing", "time.time_ns", "m.step"):
        v = [r["ns_per_call"] for r in rows if r["form"] == name]
        lines.append("| %s | %.1f | %.1f |" % (name, statistics.median(v), max(v)))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "step_cost.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
