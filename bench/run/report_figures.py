#!/usr/bin/env python3
"""The figures of diescope reports as one CSV: the headline and every unit, over the whole run and
over the steady window.

    report_figures.py NAME=REPORT.json ...

One row per report and scope (run, and window where one was found): GPU-Util over the time the
counters cover, GPU-Util over the whole span (reported beside a partial result), DIE-Util, the gap in
points, the limiting unit, DRAM bytes per second, the SM clock's mean and minimum and the memory
clock's mean in MHz (over the span the report's hardware block covers: the window when one was found,
the same on both rows), then per unit its mean (KEY_mean) and its busiest sample (KEY_max), in
percent of peak.
"""
import json
import sys


def cell(value):
    if value is None:
        return ""
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def main():
    rows, keys = [], []
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        report = json.load(open(path))
        hw = report.get("hardware", {})
        sm, mem = hw.get("sm_clock_mhz") or {}, hw.get("mem_clock_mhz") or {}
        clocks = [sm.get("mean"), sm.get("min"), mem.get("mean")]
        scopes = [("run", report["results"])]
        if report.get("window", {}).get("found"):
            scopes.append(("window", report["window"]["results"]))
        for scope, r in scopes:
            units = {u["key"]: u for u in r.get("units", [])}
            keys += [k for k in units if k not in keys]
            rows.append(([name, scope, r.get("gpu_util_pct"),
                          r.get("gpu_util_whole_span_pct"), r.get("die_util_pct"), r.get("gap_points"),
                          r.get("limiting_unit"), r.get("rates_per_s", {}).get("dram_bytes")] + clocks, units))
    header = ["name", "scope", "gpu_util_pct", "gpu_util_whole_span_pct", "die_util_pct", "gap_points",
              "limiting_unit", "dram_bytes_per_s", "sm_mhz_mean", "sm_mhz_min", "mem_mhz_mean"]
    print(",".join(header + [f"{k}_{m}" for k in keys for m in ("mean", "max")]))
    for head, units in rows:
        tail = []
        for k in keys:
            u = units.get(k, {})
            tail += [u.get("mean_pct"), u.get("max_sample_pct")]
        print(",".join(cell(v) for v in head + tail))


if __name__ == "__main__":
    main()
