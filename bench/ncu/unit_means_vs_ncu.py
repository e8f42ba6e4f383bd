#!/usr/bin/env python3
"""diescope's unit means over a steady window beside Nsight Compute's per-kernel percents of the same steps.

    unit_means_vs_ncu.py metrics REPORT.json [AVAILABLE.txt]
    unit_means_vs_ncu.py table --report REPORT.json --steps N --ncu NCU.csv --ncu-steps M [--name NAME]
                               [--csv OUT.csv]

`metrics` prints, comma-separated, the Nsight Compute metrics behind every unit of the report's unit
table (report.json's unit_recipes): each counter in its plain form (the counter group qualifier such as
`TPC.TriageCompute.` and the `_realtime` suffix taken off) and, when it differs and its base name is in
AVAILABLE.txt (what `ncu --query-metrics` printed), the realtime form diescope reads; then kernel time,
the SM clock, the SM's elapsed cycles and the DRAM byte count.

`table` prints one markdown row per unit: diescope's mean over the window (report.json's
window.results.units[].mean_pct), Nsight Compute's per-kernel percent weighted by each kernel's
duration over the same wall time, and the difference. The same wall time: ncu profiled M steps, the
window held N, so each kernel's percent x duration is summed over the M steps and divided by
M x (window length / N). This weighting counts the idle time between kernels as 0, as diescope's
window mean does. A unit that is the mean of two counters is the mean of the two weighted figures.
Beside the table: the realtime forms where ncu read them, the kernel time per step against the wall
time per step, ncu's elapsed SM cycles over the clock (the time its percents are of), the SM clock on
both sides, and DRAM bytes per step on both sides (diescope's counted
bytes against the sum of ncu's dram__bytes.sum), so a DRAM difference can be told from a time one.
--csv also writes the rows as CSV (NAME in the first column, appended when the file exists).
"""
import argparse
import csv
import math
import os
import re
import sys

TIME = "gpu__time_duration.sum"
CLOCK = "sm__cycles_elapsed.avg.per_second"
CYCLES = "sm__cycles_elapsed.avg"
DRAM_BYTES = "dram__bytes.sum"

# Nsight Compute scales units unless told --print-units base; both are read.
SCALE = {
    "": 1, "%": 1, "cycle": 1, "kcycle": 1e3, "mcycle": 1e6,
    "byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
    "second": 1, "msecond": 1e-3, "usecond": 1e-6, "nsecond": 1e-9,
    "hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9,
    "cycle/second": 1, "cycle/msecond": 1e3, "cycle/usecond": 1e6, "cycle/nsecond": 1e9,
}


def fail(msg):
    sys.exit(f"unit_means_vs_ncu: {msg}")


def plain(counter):
    """The plain Nsight Compute name of a unit-table counter: no group qualifier, no _realtime."""
    return re.sub(r"_realtime(_v\d+)?(?=\.)", "", realtime(counter))


def realtime(counter):
    """The counter without its group qualifier (the part before the first component holding '__')."""
    parts = counter.split(".")
    for i, part in enumerate(parts):
        if "__" in part:
            return ".".join(parts[i:])
    fail(f"{counter!r} is not a counter name (no component with '__')")


def base(metric):
    return metric.split(".")[0]


def load_report(path):
    try:
        report = __import__("json").load(open(path))
    except (OSError, ValueError) as e:
        fail(f"cannot read the report {path}: {e}; give the report.json `diescope run` wrote")
    recipes = report.get("results", {}).get("unit_recipes")
    if not recipes:
        fail(f"{path} has no results.unit_recipes; it is not a report of chip samples")
    # Only chip units have counters Nsight Compute can read (the NVML engines' recipes name NVML calls).
    chip = {u["key"] for u in report["results"].get("units", []) if u.get("source") == "chip"}
    return report, {k: r for k, r in recipes.items() if k in chip}


def cmd_metrics(args):
    _, recipes = load_report(args.report)
    available = None
    if args.available:
        available = set(re.findall(r"\b[a-z0-9]+__[a-z0-9_]+\b", open(args.available).read()))
    out = []
    for key, recipe in recipes.items():
        for counter in recipe.get("counters", []):
            p, r = plain(counter), realtime(counter)
            if p not in out:
                out.append(p)
            if r != p and r not in out and (available is None or base(r) in available):
                out.append(r)
    for m in (TIME, CLOCK, CYCLES, DRAM_BYTES):
        if m not in out:
            out.append(m)
    print(",".join(out))


def read_ncu(path):
    """{launch id: {metric: value in base units}} and the kernel names, from `ncu --csv` output."""
    rows = [line for line in open(path, errors="replace") if line.startswith('"')]
    if not rows:
        fail(f"{path} holds no CSV rows: ncu profiled no kernel (its ==PROF== lines say why)")
    launches, names = {}, {}
    for row in csv.DictReader(rows):
        try:
            launch, metric, unit, text = row["ID"], row["Metric Name"], row["Metric Unit"], row["Metric Value"]
        except KeyError as e:
            fail(f"{path}: no column {e}; give the output of `ncu --csv --metrics ...` (the details page)")
        scale = SCALE.get(unit.strip().lower())
        if scale is None:
            fail(f"{path}: unit {unit!r} of {metric} is not known; run ncu with --print-units base, or add the "
                 "unit's scale to SCALE")
        try:
            value = float(text.replace(",", "")) * scale
        except ValueError:
            value = math.nan
        launches.setdefault(launch, {})[metric] = value
        names[launch] = row.get("Kernel Name", "")
    return launches, names


def weighted(launches, metric):
    """Sum over launches of value x duration (seconds); None when no launch has the metric."""
    total, seen = 0.0, False
    for m in launches.values():
        v, t = m.get(metric), m.get(TIME)
        if v is None or t is None or math.isnan(v) or math.isnan(t):
            continue
        total += v * t
        seen = True
    return total if seen else None


def fmt(v, digits=2):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def cmd_table(args):
    report, recipes = load_report(args.report)
    window = report.get("window", {})
    if not window.get("found"):
        fail(f"{args.report}: no steady window ({window.get('how', 'no window block')}); run with --window markers "
             "and a workload that prints the markers")
    if args.steps <= 0 or args.ncu_steps <= 0:
        fail("--steps and --ncu-steps must be positive step counts")
    res = window["results"]
    span = res["span_s"]
    if not span or span <= 0:
        fail(f"{args.report}: the window is empty")
    wall_per_step = span / args.steps
    ncu_wall = wall_per_step * args.ncu_steps
    launches, _ = read_ncu(args.ncu)
    if not any(TIME in m for m in launches.values()):
        fail(f"{args.ncu}: no {TIME} in the profile; collect it (the metrics command lists it)")
    units = {u["key"]: u for u in res.get("units", [])}

    rows = []
    for key, recipe in recipes.items():
        u = units.get(key)
        if u is None or u.get("source") != "chip":
            continue
        counters = recipe.get("counters", [])
        plain_sums = [weighted(launches, plain(c)) for c in counters]
        rt_sums = [weighted(launches, realtime(c)) for c in counters]
        ncu = None if any(s is None for s in plain_sums) else sum(plain_sums) / len(plain_sums) / ncu_wall
        rt = None
        if all(realtime(c) != plain(c) for c in counters) and not any(s is None for s in rt_sums):
            rt = sum(rt_sums) / len(rt_sums) / ncu_wall
        mean = u.get("mean_pct")
        mean = math.nan if mean is None else mean
        diff = None if ncu is None else mean - ncu
        rows.append((u.get("label", key), mean, ncu, diff, rt))

    kernel_s = sum(m.get(TIME, 0.0) for m in launches.values())
    clock = weighted(launches, CLOCK)
    ncu_mhz = None if clock is None else clock / kernel_s / 1e6
    # The percents' own denominator: each kernel's elapsed SM cycles at its clock, against its duration.
    elapsed = [m[CYCLES] / m[CLOCK] for m in launches.values() if m.get(CYCLES) and m.get(CLOCK)]
    elapsed_s = sum(elapsed) if len(elapsed) == len(launches) else None
    sm = (report.get("hardware", {}).get("sm_clock_mhz") or {}).get("mean")
    dram_rate = (res.get("rates_per_s") or {}).get("dram_bytes")
    covered = res.get("chip_covered_s")
    die_dram = None if dram_rate is None or covered is None else dram_rate * covered / args.steps
    ncu_dram_vals = [m.get(DRAM_BYTES) for m in launches.values()]
    ncu_dram = None if any(v is None for v in ncu_dram_vals) else sum(ncu_dram_vals) / args.ncu_steps

    print(f"### {args.name}\n")
    print("| unit | diescope window mean | ncu, time-weighted | difference | ncu, realtime form |")
    print("| --- | --- | --- | --- | --- |")
    for label, mean, ncu, diff, rt in rows:
        print(f"| {label} | {fmt(mean)} | {fmt(ncu)} | {fmt(diff)} | {fmt(rt)} |")
    print()
    print("| per step | diescope | ncu |")
    print("| --- | --- | --- |")
    print(f"| wall time (diescope: window / {args.steps} steps), kernel time (ncu: {len(launches)} launches / "
          f"{args.ncu_steps} steps), ms | {fmt(wall_per_step * 1e3, 3)} | {fmt(kernel_s / args.ncu_steps * 1e3, 3)} |")
    print(f"| SM elapsed cycles / SM clock, ms (ncu) | | "
          f"{fmt(None if elapsed_s is None else elapsed_s / args.ncu_steps * 1e3, 3)} |")
    print(f"| SM clock, MHz (diescope: window mean; ncu: kernel-time mean) | {fmt(sm, 0)} | {fmt(ncu_mhz, 0)} |")
    print(f"| DRAM bytes, MB | {fmt(None if die_dram is None else die_dram / 1e6, 1)} | "
          f"{fmt(None if ncu_dram is None else ncu_dram / 1e6, 1)} |")
    print()

    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            if new:
                w.writerow(["name", "row", "diescope", "ncu", "difference", "ncu_realtime"])
            for label, mean, ncu, diff, rt in rows:
                w.writerow([args.name, label, fmt(mean), fmt(ncu), fmt(diff), fmt(rt)])
            w.writerow([args.name, "ms per step (wall; ncu kernel time)", fmt(wall_per_step * 1e3, 3),
                        fmt(kernel_s / args.ncu_steps * 1e3, 3), "", ""])
            w.writerow([args.name, "ms per step (ncu SM elapsed cycles / clock)", "",
                        fmt(None if elapsed_s is None else elapsed_s / args.ncu_steps * 1e3, 3), "", ""])
            w.writerow([args.name, "SM clock MHz", fmt(sm, 0), fmt(ncu_mhz, 0), "", ""])
            w.writerow([args.name, "DRAM MB per step", fmt(None if die_dram is None else die_dram / 1e6, 1),
                        fmt(None if ncu_dram is None else ncu_dram / 1e6, 1), "", ""])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("metrics")
    m.add_argument("report")
    m.add_argument("available", nargs="?")
    t = sub.add_parser("table")
    t.add_argument("--report", required=True)
    t.add_argument("--steps", type=int, required=True, help="steps inside diescope's window")
    t.add_argument("--ncu", required=True, help="ncu --csv output")
    t.add_argument("--ncu-steps", type=int, required=True, help="steps ncu profiled")
    t.add_argument("--name", default="model")
    t.add_argument("--csv")
    args = p.parse_args()
    (cmd_metrics if args.cmd == "metrics" else cmd_table)(args)


if __name__ == "__main__":
    main()
