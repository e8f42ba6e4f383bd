#!/usr/bin/env python3
"""The GPM vs PM sampling table from pairs of `diescope run --window markers` reports.

    python3 bench/run/gpm_vs_pm_table.py WORK NAME...

For each NAME, WORK/NAME-pm and WORK/NAME-gpm hold one run each (gpu0.dsrec.report/report.json).
Prints one markdown row per run with the window's DIE-Util, limiting unit and each unit's mean; units
a source does not read are '-'.
"""
import json
import os
import sys

UNITS = ["fp32", "tensor", "fp64", "fp16", "integer", "dram", "ldst", "l1_fill", "l2"]
DIAGS = ["sm_active", "occupancy"]


def fmt(v):
    return "-" if v is None else f"{v:.1f}"


def row(name, source, path):
    try:
        r = json.load(open(path))
    except (OSError, ValueError) as e:
        return f"| {name} | {source} | no report ({e.__class__.__name__}) |" + " |" * (len(UNITS) + 4)
    window = r.get("window") or {}
    found = window.get("found") and window.get("results")
    w = window["results"] if found else r["results"]
    span = "window" if found else "run"
    units = {u["key"]: u.get("mean_pct") for u in w["units"]}
    diags = {d["key"]: d.get("mean_pct") for d in w["diagnostics"]}
    cells = [fmt(w.get("die_util_pct")), w.get("limiting_unit") or "-"]
    cells += [fmt(units.get(k)) for k in UNITS]
    cells += [fmt(diags.get(k)) for k in DIAGS]
    samples = w.get("samples")
    cells.append(str(samples.get("used", samples) if isinstance(samples, dict) else samples))
    return f"| {name} | {source} ({span}) | " + " | ".join(cells) + " |"


def main():
    work, names = sys.argv[1], sys.argv[2:]
    print("| workload | source | DIE-Util | limiting | " + " | ".join(UNITS) + " | " + " | ".join(DIAGS) + " | samples |")
    print("|" + " --- |" * (len(UNITS) + len(DIAGS) + 5))
    for name in names:
        for source in ("pm", "gpm"):
            print(row(name, source, os.path.join(work, f"{name}-{source}", "gpu0.dsrec.report", "report.json")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
