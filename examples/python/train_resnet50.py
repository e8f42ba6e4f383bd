#!/usr/bin/env python3
"""ResNet-50 AMP training (the bundled workload, workloads/pytorch/resnet50_amp.py) measured from inside
the program with diescope.measure (docs/python.md#measure).

    PYTHONPATH=build/release/python python3 examples/python/train_resnet50.py --measure --output OUT
    diescope run --window markers -- python3 examples/python/train_resnet50.py     # the same script under run
    python3 examples/python/train_resnet50.py                                      # neither: the baseline

The same steps in every form: warm-up, then the timed steps between the window markers (printed for
`run`, passed to the measurement with --measure). It prints one JSON line: the training's own step
time over the window and, with --measure, the per-step figures averaged over the steady window,
weighted by each step's duration (the window's own figures from the report beside them).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "workloads", "pytorch"))

import torch  # noqa: E402

from resnet50_amp import amp_resnet50  # noqa: E402
from steady_window import run_window  # noqa: E402


def window_means(m):
    """Per-step figures averaged over the steps inside the steady window, weighted by duration."""
    steps = m.steps
    cols = {k: list(steps[k]) for k in ("in_window", "duration_ms", "die_util_pct", "gpu_util_pct",
                                          "gap_points", "energy_j")}
    rows = [i for i, w in enumerate(cols["in_window"]) if w == 1]
    total_ms = sum(cols["duration_ms"][i] for i in rows)

    def weighted(name):
        pairs = [(cols[name][i], cols["duration_ms"][i]) for i in rows if cols[name][i] == cols[name][i]]
        weight = sum(d for _, d in pairs)
        return sum(v * d for v, d in pairs) / weight if weight else None

    energy = [cols["energy_j"][i] for i in rows if cols["energy_j"][i] == cols["energy_j"][i]]
    return {"steps_in_window": len(rows), "window_ms": total_ms,
            "die_util_pct": weighted("die_util_pct"), "gpu_util_pct": weighted("gpu_util_pct"),
            "gap_points": weighted("gap_points"),
            "energy_j_per_step": sum(energy) / len(energy) if energy else None,
            "mean_power_w": sum(energy) / (total_ms / 1e3) if energy and total_ms else None}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=15)
    p.add_argument("--measure", action="store_true", help="measure with diescope.measure from inside")
    p.add_argument("--interval-ms", type=float, default=10)
    p.add_argument("--output", help="with --measure: the folder for the recordings, reports and steps.csv")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("train_resnet50: no CUDA device visible to PyTorch; run it on a machine with an NVIDIA GPU",
              file=sys.stderr)
        return 2

    model, opt, scaler, loss_fn, x, y = amp_resnet50(args.batch)

    def train_step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.cuda.nvtx.range("forward"):
                loss = loss_fn(model(x), y)
        with torch.cuda.nvtx.range("backward"):
            scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    result = {"script": "train_resnet50", "batch": args.batch, "measure": args.measure}
    if not args.measure:
        steps, elapsed = run_window(train_step, steps=args.steps, warmup=args.warmup, sync=torch.cuda.synchronize)
    else:
        import diescope

        with diescope.measure(gpus=[torch.cuda.current_device()], interval_ms=args.interval_ms,
                              output=args.output) as m:
            def step():
                train_step()
                m.step()

            def out(line, **kwargs):  # the window markers go to the measurement, as `run` reads them
                print(line, **kwargs)
                m.marker(line)

            steps, elapsed = run_window(step, steps=args.steps, warmup=args.warmup, sync=torch.cuda.synchronize,
                                        out=out)
        result["per_step_over_window"] = window_means(m)
        w = m.report["window"]
        result["report_window"] = {k: w["results"][k] for k in ("die_util_pct", "gpu_util_pct", "gap_points",
                                                                "limiting_unit")} if w["found"] else None
        result["folder"] = m.folder
        result["warnings"] = m.warnings
    result.update({"steps": steps, "seconds": elapsed, "step_ms": elapsed / steps * 1e3,
                   "images_per_s": steps * args.batch / elapsed, "gpu": torch.cuda.get_device_name(0),
                   "torch": torch.__version__, "time": time.time()})
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
