#!/usr/bin/env python3
"""The table of bench/python/measure_vs_run.sh: per run, the training's own step time, run's window
figures (from its report.json) or measure's per-step figures averaged over the steady window with
measure's own window figures, and the differences between forms beside the spread between rounds.

    bench/python/measure_vs_run.py WORK RUNS_JSONL   (prints markdown)
"""
import json
import os
import sys


def fmt(v, digits=1):
    return "n/a" if v is None else ("%.*f" % (digits, v))


def main():
    work, runs_path = sys.argv[1:3]
    with open(runs_path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    rows = []
    for r in runs:
        row = {"form": r["form"], "round": r["round"], "exit": r.get("exit"), "step_ms": r.get("step_ms")}
        if r["form"] == "run":
            path = os.path.join(work, "run%d" % r["round"], "gpu0.dsrec.report", "report.json")
            if os.path.exists(path):
                with open(path) as f:
                    w = json.load(f)["window"]
                if w["found"]:
                    res = w["results"]
                    row.update(die=res["die_util_pct"], gpu=res["gpu_util_pct"], gap=res["gap_points"],
                               limiting=res["limiting_unit"])
        elif r["form"] == "measure":
            per = r.get("per_step_over_window") or {}
            win = r.get("report_window") or {}
            row.update(die=per.get("die_util_pct"), gpu=per.get("gpu_util_pct"), gap=per.get("gap_points"),
                       energy=per.get("energy_j_per_step"), power=per.get("mean_power_w"),
                       steps_in_window=per.get("steps_in_window"), win_die=win.get("die_util_pct"),
                       win_gpu=win.get("gpu_util_pct"), limiting=win.get("limiting_unit"))
        rows.append(row)
    print("| form | round | exit | training step ms (own clock) | DIE-Util % | GPU-Util % | gap points | "
          "limiting unit | measure: window's own DIE-Util / GPU-Util | steps in window | energy J/step | mean power W |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        own = ("%s / %s" % (fmt(row.get("win_die"), 2), fmt(row.get("win_gpu"), 2))) if row["form"] == "measure" else ""
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["form"], row["round"], row["exit"], fmt(row["step_ms"], 2), fmt(row.get("die"), 2),
            fmt(row.get("gpu"), 2), fmt(row.get("gap"), 2), row.get("limiting", ""), own,
            row.get("steps_in_window", ""), fmt(row.get("energy"), 2), fmt(row.get("power"), 0)))
    print()
    print("run: the window figures of run's report.json; measure: the per-step figures averaged over the steps "
          "inside the steady window, weighted by each step's duration (the window's own figures beside them).")

    def get(form, rnd, key):
        for row in rows:
            if row["form"] == form and row["round"] == rnd:
                return row.get(key)
        return None

    print()
    print("| figure | run round 1 − round 2 | measure round 1 − round 2 | measure − run, round 1 | measure − run, round 2 |")
    print("| --- | --- | --- | --- | --- |")
    for key, name in (("die", "DIE-Util %"), ("gpu", "GPU-Util %"), ("gap", "gap points"), ("step_ms", "step ms")):
        def diff(a, b):
            return None if a is None or b is None else a - b
        print("| %s | %s | %s | %s | %s |" % (
            name, fmt(diff(get("run", 1, key), get("run", 2, key)), 2),
            fmt(diff(get("measure", 1, key), get("measure", 2, key)), 2),
            fmt(diff(get("measure", 1, key), get("run", 1, key)), 2),
            fmt(diff(get("measure", 2, key), get("run", 2, key)), 2)))
    plain = get("plain", 1, "step_ms")
    if plain:
        print()
        print("The training's own step time alone: %.2f ms; under run: %s and %s ms; under measure: %s and %s ms."
              % (plain, fmt(get("run", 1, "step_ms"), 2), fmt(get("run", 2, "step_ms"), 2),
                 fmt(get("measure", 1, "step_ms"), 2), fmt(get("measure", 2, "step_ms"), 2)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
