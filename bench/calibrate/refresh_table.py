#!/usr/bin/env python3
"""The bundled recordings made again (bench/calibrate/bundled_refresh.sh) as one table: each run's
steady-window headline and calibration status from its report, beside the work the workload counted
itself where it counts one (FFMA: the FMA pipe share its FFMAs imply at the clock it measured;
STREAM: the bytes it moved over its own time).

    refresh_table.py HEADLINES.txt NAME=REPORT.json ...
    refresh_table.py --ceilings A.json B.json ...

HEADLINES.txt is bundled_refresh.sh's: a "== NAME: ..." line before each run's printed output, the
workload's own JSON line among it. One CSV row per report. --ceilings sets calibration files side by
side: one row per unit, each file's verdict and full-load reading (its ceiling).
"""
import json
import sys


def workload_lines(path):
    lines, name = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("== "):
            name = line[3:].split(":", 1)[0]
        elif line.startswith("{") and name:
            try:
                lines[name] = json.loads(line)
            except json.JSONDecodeError:
                pass
    return lines


def own_figure(work, window):
    """(what the workload counted, diescope's figure for it, the difference) or three blanks."""
    if not work:
        return "", "", ""
    units = {u["key"]: u["mean_pct"] for u in window["units"]}
    result = work.get("result", {})
    if "expected_fma_pipe_pct" in result:
        mine = units.get("fp32")
        return (f"FMA pipe {result['expected_fma_pipe_pct']:.2f}%", f"FP32 {mine:.2f}%",
                f"{mine - result['expected_fma_pipe_pct']:+.2f} points")
    if "gb_per_s" in result:
        rate = window.get("rates_per_s", {}).get("dram_bytes")
        if rate:
            ours = rate / 1e9
            return (f"{result['gb_per_s']:.1f} GB/s", f"DRAM rate {ours:.1f} GB/s",
                    f"{100 * (ours / result['gb_per_s'] - 1):+.2f}%")
    return "", "", ""


def ceilings(paths):
    files = [json.load(open(p, encoding="utf-8")) for p in paths]
    print("unit," + ",".join(f"{f['date']} {'quick' if f['quick'] else 'full'} (method {f['method']})" for f in files))
    for unit in files[0]["units"]:
        cells = []
        for f in files:
            u = next((x for x in f["units"] if x["key"] == unit["key"]), None)
            c = "" if u is None else f"{u['verdict']} {u['ceiling_pct']:.2f}%" if u["ceiling_pct"] is not None \
                else f"{u['verdict']} (no ceiling)"
            cells.append(c)
        print(f"{unit['label']}," + ",".join(cells))
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "--ceilings":
        return ceilings(argv[2:])
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    work = workload_lines(argv[1])
    print("run,window s,GPU-Util,DIE-Util,gap,limiting unit,calibration,workload's own count,diescope,difference")
    for arg in argv[2:]:
        name, path = arg.split("=", 1)
        r = json.load(open(path, encoding="utf-8"))
        w = r["window"]["results"] if r["window"]["found"] else None
        if w is None:
            print(f"{name},no window,,,,,{r['calibration']['status']},,,")
            continue
        own = own_figure(work.get(name), w)
        print(f"{name},{w['span_s']:.2f},{w['gpu_util_pct']:.1f},{w['die_util_pct']:.1f},{w['gap_points']:.1f},"
              f"{w['limiting_unit_label']},{r['calibration']['status']},{own[0]},{own[1]},{own[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
