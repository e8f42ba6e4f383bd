#!/usr/bin/env python3
"""Per-step DIE-Util, GPU-Util and energy of a measured training, plotted with matplotlib, as one would
in a notebook (docs/python.md#a-notebook).

    PYTHONPATH=build/release/python python3 examples/python/plot_steps.py FOLDER [OUT.png]

FOLDER is what diescope.measure(output=FOLDER) or m.save(FOLDER) wrote (steps.csv, gpu0.dsrec, ...).
It reads the steps as a DataFrame (pandas, or the diescope.Table fallback), re-reads the recording
with diescope.read_recording to draw the samples underneath, and writes OUT.png (default
FOLDER/steps.png).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the figure to a file
import matplotlib.pyplot as plt  # noqa: E402

import diescope  # noqa: E402


def read_steps(folder):
    """steps.csv as columns (pandas when there is, else plain lists)."""
    path = os.path.join(folder, "steps.csv")
    try:
        import pandas
        return pandas.read_csv(path)
    except ImportError:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        return {k: [float(r[k]) if k != "limiting_unit" else r[k] for r in rows] for k in rows[0]}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(folder, "steps.png")
    steps = read_steps(folder)
    samples, report, _units = diescope.read_recording(os.path.join(folder, "gpu0.dsrec"))

    t = list(steps["time_s"])
    edges = t + [t[-1] + list(steps["duration_ms"])[-1] / 1e3]  # each step drawn over its own span
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    used = [i for i, u in enumerate(samples["use"]) if u == "used"]
    st = list(samples["time_s"])
    die = list(samples["die_util_pct"])
    ax1.plot([st[i] for i in used], [die[i] for i in used], color="0.8", lw=0.8, label="DIE-Util per sample")
    ax1.stairs(list(steps["die_util_pct"]), edges, label="DIE-Util per step", lw=1.5)
    ax1.stairs(list(steps["gpu_util_pct"]), edges, label="GPU-Util per step", lw=1.5)
    ax1.set_ylabel("%")
    ax1.set_ylim(0, 105)
    ax1.legend(loc="lower right")
    w = report["window"]
    if w["found"]:
        r = w["results"]
        t0 = (r["start_ns"] - report["results"]["start_ns"]) / 1e9
        t1 = (r["end_ns"] - report["results"]["start_ns"]) / 1e9
        for ax in (ax1, ax2):
            ax.axvspan(t0, t1, color="tab:green", alpha=0.08)
        ax1.set_title("steady window: DIE-Util %.1f%%, GPU-Util %.1f%%, limiting unit %s"
                      % (r["die_util_pct"], r["gpu_util_pct"], r.get("limiting_unit_label") or r.get("limiting_unit")))
    ax2.stairs(list(steps["energy_j"]), edges, color="tab:red", lw=1.5)
    ax2.set_ylabel("energy per step (J)")
    ax2.set_xlabel("seconds since the measurement started")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print("wrote " + out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
