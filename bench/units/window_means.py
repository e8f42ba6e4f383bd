#!/usr/bin/env python3
"""Mean of each unit over the chip samples wholly inside a window of a diescope recording.

    window_means.py NAME=RECORDING[.gz][@STEP_JSONL] ...

The window is the recording's marked window (first `mark ... start` to last `mark ... stop`), or,
with @STEP_JSONL, the `window` of each `"calibrate":"step"` line in that file (the step's own
measured span, when calibrate steps run under `diescope run`; with more than one step, the rows are
named NAME/INDEX). Samples without
values (nan) are left out. Prints CSV: name,unit,mean_pct,samples,window_s.
"""
import gzip
import json
import math
import sys


def lines(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def step_windows(name, path):
    steps = [json.loads(line) for line in open(path) if line.startswith("{") and '"calibrate":"step"' in line]
    if not steps:
        raise SystemExit(f"{path}: no calibrate step line")
    return [(name if len(steps) == 1 else f"{name}/{s['index']}", *s["window"]) for s in steps]


def main():
    print("name,unit,mean_pct,samples,window_s")
    for arg in sys.argv[1:]:
        name, _, rest = arg.partition("=")
        path, _, step = rest.partition("@")
        keys, chips, starts, stops = [], [], [], []
        for line in lines(path):
            kind, _, tail = line.rstrip("\n").partition(" ")
            if kind == "meta":
                meta = json.loads(tail)
                keys = [c["key"] for part in ("units", "diagnostics", "counts") for c in meta.get(part, [])]
            elif kind == "chip":
                f = tail.split()
                chips.append((int(f[0]), int(f[1]), [float(x) for x in f[2:]]))
            elif kind == "mark":
                t, what = tail.split()[:2]
                (starts if what == "start" else stops).append(int(t))
        windows = step_windows(name, step) if step else [(name, starts[0], stops[-1])]
        for label, lo, hi in windows:
            inside = [v for s, e, v in chips if s >= lo and e <= hi and not any(math.isnan(x) for x in v)]
            for i, key in enumerate(keys):
                mean = sum(v[i] for v in inside) / len(inside)
                print(f"{label},{key},{mean:.2f},{len(inside)},{(hi - lo) / 1e9:.3f}")


if __name__ == "__main__":
    main()
