#!/usr/bin/env python3
"""diescope's unit means over a steady window beside Nsight Compute's per-kernel percents of the same steps.

    unit_means_vs_ncu.py metrics REPORT.json [AVAILABLE.txt] [--units KEYS]
    unit_means_vs_ncu.py table --report REPORT.json --steps N --ncu NCU.csv --ncu-steps M [--name NAME]
                               [--csv OUT.csv] [--units KEYS] [--sm-clock-mhz MHZ|window]

`metrics` prints, comma-separated, the Nsight Compute metrics behind every unit of the report's unit
table (report.json's unit_recipes): each counter in its plain form (the counter group qualifier such as
`TPC.TriageCompute.` and the `_realtime` suffix taken off) and, only when AVAILABLE.txt (what
`ncu --query-metrics` printed) is given and lists its base name, the realtime form diescope reads (more
metrics, more replay passes); then kernel time,
the SM clock, the SM's elapsed cycles and the DRAM byte count. --units KEYS keeps only those units'
plain counters, kernel time and (for dram) the byte count: fewer metrics, fewer replay passes (one pass
means no memory is saved and restored between passes at all).

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

--sm-clock-mhz MHZ (or `window`: the report's mean SM clock over the window) adds a table of the units
whose counters run on the SM clock (sm__, smsp__, l1tex__), read from busy cycles rather than percents.
A kernel's percent is its busy cycles over its own elapsed SM cycles, so a kernel that ran at a lower
clock under ncu reads a higher percent for the same work. Each kernel's busy cycles (percent x
sm__cycles_elapsed.avg) are summed and divided by MHZ x the same wall time: ncu's figure if every
kernel had run at MHZ. Beside it: the clock the busy cycles ran at under ncu (busy-cycle-weighted mean of
each kernel's sm__cycles_elapsed.avg.per_second), and the clock at which ncu's busy cycles give exactly
diescope's mean (busy cycles / (wall time x diescope's mean)): when one clock reconciles every SM-clock
unit, the units agree and the difference is the clock. Needs sm__cycles_elapsed.avg and .per_second in
the profile (the full metric list has them; a --units subset does not).
"""
import argparse
import csv
import json
import math
import os
import re
import sys

TIME = "gpu__time_duration.sum"
CLOCK = "sm__cycles_elapsed.avg.per_second"
CYCLES = "sm__cycles_elapsed.avg"
DRAM_BYTES = "dram__bytes.sum"

# Nsight Compute prints each value in a unit it may scale (`usecond`, `Mbyte`, `cycle/nsecond`; with
# --print-units base `ns`, `byte`, ...). A unit is a product of names with an SI prefix, over another.
BASES = {"%": 1, "": 1, "s": 1, "second": 1, "byte": 1, "b": 1, "cycle": 1, "hz": 1, "inst": 1, "sector": 1}
PREFIX = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
SUBSECOND = {"ms": 1e-3, "msecond": 1e-3, "us": 1e-6, "usecond": 1e-6, "ns": 1e-9, "nsecond": 1e-9}


def scale_of(unit):
    """The factor that turns a value in `unit` into base units (seconds, bytes, cycles, Hz); None if unknown."""
    def one(name):
        name = name.strip().lower()
        if name in SUBSECOND:
            return SUBSECOND[name]
        if name in BASES:
            return BASES[name]
        if name[:1] in PREFIX and name[1:] in BASES and name[1:]:
            return PREFIX[name[:1]] * BASES[name[1:]]
        return None
    top, _, bottom = unit.partition("/")
    a = one(top)
    b = one(bottom) if bottom else 1
    return None if a is None or b is None else a / b


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
        report = json.load(open(path))
    except (OSError, ValueError) as e:
        fail(f"cannot read the report {path}: {e}; give the report.json `diescope run` wrote")
    recipes = report.get("results", {}).get("unit_recipes")
    if not recipes:
        fail(f"{path} has no results.unit_recipes; it is not a report of chip samples")
    # Only chip units have counters Nsight Compute can read (the NVML engines' recipes name NVML calls).
    chip = {u["key"] for u in report["results"].get("units", []) if u.get("source") == "chip"}
    return report, {k: r for k, r in recipes.items() if k in chip}


def only(recipes, keys):
    """The recipes of the units named in keys (comma or space separated); all when keys is empty."""
    wanted = [k for k in re.split(r"[,\s]+", keys or "") if k]
    missing = [k for k in wanted if k not in recipes]
    if missing:
        fail(f"no chip unit {', '.join(missing)} in the report; its chip units are {', '.join(recipes)}")
    return {k: r for k, r in recipes.items() if not wanted or k in wanted}


def cmd_metrics(args):
    _, recipes = load_report(args.report)
    recipes = only(recipes, args.units)
    available = None
    if args.available:
        available = set(re.findall(r"\b[a-z0-9]+__[a-z0-9_]+\b", open(args.available).read()))
    out = []
    for key, recipe in recipes.items():
        for counter in recipe.get("counters", []):
            p, r = plain(counter), realtime(counter)
            if p not in out:
                out.append(p)
            if r != p and r not in out and not args.units and available is not None and base(r) in available:
                out.append(r)
    # With a unit subset, the fewest extra metrics (fewer replay passes): time, and DRAM's byte count.
    extra = (TIME, CLOCK, CYCLES, DRAM_BYTES) if not args.units else (TIME,) + ((DRAM_BYTES,) if "dram" in recipes else ())
    for m in extra:
        if m not in out:
            out.append(m)
    print(",".join(out))


def read_ncu(path):
    """{launch id: {metric: value in base units}} and the kernel names, from `ncu --csv` output."""
    rows = [line for line in open(path, errors="replace") if line.startswith('"')]
    if not rows:
        fail(f"{path} holds no CSV rows: ncu profiled no kernel (its ==PROF== lines say why)")
    launches, names, unknown = {}, {}, set()
    for row in csv.DictReader(rows):
        try:
            launch, metric, unit, text = row["ID"], row["Metric Name"], row["Metric Unit"], row["Metric Value"]
        except KeyError as e:
            fail(f"{path}: no column {e}; give the output of `ncu --csv --metrics ...` (the details page)")
        scale = scale_of(unit)
        if scale is None:
            if metric not in unknown:
                print(f"unit_means_vs_ncu: {path}: unit {unit!r} of {metric} is not known; its values are left "
                      "out (add the unit to BASES)", file=sys.stderr)
            unknown.add(metric)
            continue
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


# Counters that count on the SM clock (their percents are of elapsed SM cycles).
SM_CLOCK_PREFIXES = ("sm__", "smsp__", "l1tex__")


def busy_cycles(launches, metric):
    """Sum over launches of percent x elapsed SM cycles, and of percent x elapsed cycles / clock; None when
    a launch with the metric lacks the cycles or the clock."""
    busy, busy_s, seen = 0.0, 0.0, False
    for m in launches.values():
        v = m.get(metric)
        if v is None or math.isnan(v):
            continue
        cycles, clock = m.get(CYCLES), m.get(CLOCK)
        if not cycles or not clock or math.isnan(cycles) or math.isnan(clock):
            return None
        busy += v * cycles
        busy_s += v * cycles / clock
        seen = True
    return (busy, busy_s) if seen else None


def clock_rows(units, recipes, launches, ncu_wall, mhz):
    """(label, diescope mean, ncu time-weighted, ncu at mhz, difference, busy-weighted clock MHz, clock giving
    diescope's mean MHz) for each unit whose counters all run on the SM clock."""
    rows = []
    for key, u in units.items():
        recipe = recipes.get(key)
        if recipe is None or u.get("source") != "chip":
            continue
        counters = [plain(c) for c in recipe.get("counters", [])]
        if not counters or not all(c.startswith(SM_CLOCK_PREFIXES) for c in counters):
            continue
        sums = [busy_cycles(launches, c) for c in counters]
        timed = [weighted(launches, c) for c in counters]
        mean = u.get("mean_pct")
        mean = math.nan if mean is None else mean
        if any(s is None for s in sums) or any(t is None for t in timed):
            rows.append((u.get("label", key), mean, None, None, None, None, None))
            continue
        busy = sum(s[0] for s in sums) / len(sums)
        busy_s = sum(s[1] for s in sums) / len(sums)
        at = busy / (mhz * 1e6) / ncu_wall
        ncu = sum(timed) / len(timed) / ncu_wall
        own = busy / busy_s / 1e6 if busy_s > 0 else None
        gives = busy / ncu_wall / mean / 1e6 if mean > 0 else None
        rows.append((u.get("label", key), mean, ncu, at, mean - at, own, gives))
    return rows


def fmt(v, digits=2):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def cmd_table(args):
    report, recipes = load_report(args.report)
    recipes = only(recipes, args.units)
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
    for key, u in units.items():  # in the report's order
        recipe = recipes.get(key)
        if recipe is None or u.get("source") != "chip":
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

    crows = []
    if args.sm_clock_mhz:
        if args.sm_clock_mhz == "window":
            mhz = sm
            if not mhz:
                fail(f"{args.report} has no hardware.sm_clock_mhz.mean; give --sm-clock-mhz a number")
        else:
            try:
                mhz = float(args.sm_clock_mhz)
            except ValueError:
                mhz = 0
            if not mhz > 0:
                fail(f"--sm-clock-mhz {args.sm_clock_mhz!r}: give a clock in MHz or `window`")
        if not any(CYCLES in m and CLOCK in m for m in launches.values()):
            fail(f"{args.ncu}: --sm-clock-mhz needs {CYCLES} and {CLOCK} in the profile; profile the full "
                 "metric list (the metrics command without --units)")
        crows = clock_rows(units, recipes, launches, ncu_wall, mhz)
        print(f"#### {args.name}: SM-clock units from busy cycles at {fmt(mhz, 0)} MHz\n")
        print(f"| unit | diescope window mean | ncu, time-weighted | ncu, busy cycles at {fmt(mhz, 0)} MHz | "
              "difference | ncu clock of the busy cycles, MHz | clock giving diescope's mean, MHz |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for label, mean, ncu, at, diff, own, gives in crows:
            print(f"| {label} | {fmt(mean)} | {fmt(ncu)} | {fmt(at)} | {fmt(diff)} | {fmt(own, 0)} | {fmt(gives, 0)} |")
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
            for label, mean, ncu, at, diff, own, gives in crows:
                w.writerow([args.name, f"{label}, ncu busy cycles at {fmt(mhz, 0)} MHz", fmt(mean), fmt(at), fmt(diff), ""])
                w.writerow([args.name, f"{label}, SM clock MHz (ncu: of the busy cycles; diescope: giving its mean)",
                            fmt(gives, 0), fmt(own, 0), "", ""])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("metrics")
    m.add_argument("report")
    m.add_argument("available", nargs="?")
    m.add_argument("--units", help="only these unit keys (comma-separated): the plain counters and kernel time")
    t = sub.add_parser("table")
    t.add_argument("--report", required=True)
    t.add_argument("--steps", type=int, required=True, help="steps inside diescope's window")
    t.add_argument("--ncu", required=True, help="ncu --csv output")
    t.add_argument("--ncu-steps", type=int, required=True, help="steps ncu profiled")
    t.add_argument("--name", default="model")
    t.add_argument("--csv")
    t.add_argument("--units", help="only these unit keys (comma-separated)")
    t.add_argument("--sm-clock-mhz", help="also the SM-clock units from busy cycles at this clock (MHz, or `window`)")
    args = p.parse_args()
    (cmd_metrics if args.cmd == "metrics" else cmd_table)(args)


if __name__ == "__main__":
    main()
