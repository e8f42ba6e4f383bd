#!/usr/bin/env python3
"""The figures of bench/live/every_command.sh, and two such runs side by side.

  live_commands_table.py collect WORK            every command's figures, as JSON on stdout
  live_commands_table.py compare BEFORE AFTER    a Markdown table of two figures.json files

`collect` reads each command's own outputs (report.json, the agent's NDJSON records and /metrics,
top's screen, bench.json, the calibration file); a figure a command did not produce is null.
`compare` prints one row per figure with both values and their difference.
"""
import glob
import json
import math
import re
import sys


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_figures(work, name):
    reports = sorted(glob.glob(f"{work}/{name}/**/report.json", recursive=True))
    report = load_json(reports[0]) if reports else None
    if not report:
        return {}
    win = report.get("window") or {}
    res = win.get("results") if win.get("found") else report.get("results")
    res = res or {}
    return {
        f"{name}.die_util_pct": res.get("die_util_pct"),
        f"{name}.gpu_util_pct": res.get("gpu_util_pct"),
        f"{name}.gap_points": res.get("gap_points"),
        f"{name}.limiting_unit": res.get("limiting_unit"),
        f"{name}.gpu_util_source": (report.get("collection") or {}).get("gpu_util_source"),
    }


def agent_figures(work, name):
    out = {}
    records = []
    try:
        with open(f"{work}/{name}.stdout") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        records.append(json.loads(line))
                    except ValueError:
                        pass
    except OSError:
        pass
    # The first record starts with the counters' start-up; the second covers a whole period of load.
    # Beside ncu, only the records whose notes say GPM count: ncu may end before the agent does.
    full = [r for r in records if (r.get("chip") or {}).get("die_util_pct") is not None]
    if name.endswith("ncu"):
        full = [r for r in full if "GPM" in json.dumps(r.get("notes"))] or full
    if full:
        r = full[1] if len(full) > 1 else full[0]
        out[f"{name}.records"] = len(records)
        out[f"{name}.die_util_pct"] = r["chip"].get("die_util_pct")
        out[f"{name}.gpu_util_pct"] = (r.get("gpu_util") or {}).get("pct")
        out[f"{name}.limiting_unit"] = r["chip"].get("limiting_unit")
    else:
        out[f"{name}.records"] = len(records)
    try:
        text = open(f"{work}/{name}.metrics").read()
    except OSError:
        text = ""
    m = re.search(r'^diescope_die_util_percent(?:\{[^}]*\})? ([0-9.eE+-]+|NaN)$', text, re.M)
    out[f"{name}.metrics_die_util_pct"] = float(m.group(1)) if m and m.group(1) != "NaN" else None
    m = re.search(r'^diescope_agent_info\{[^}]*source="([^"]*)"', text, re.M)
    out[f"{name}.metrics_source"] = m.group(1) if m else None
    return out


def top_figures(work):
    try:
        screen = open(f"{work}/top-once.stdout").read()
    except OSError:
        return {}
    out = {}
    m = re.search(r"DIE-Util\s+([0-9.]+)%", screen)
    out["top-once.die_util_pct"] = float(m.group(1)) if m else None
    m = re.search(r"GPU-Util\s+([0-9.]+)%", screen)
    out["top-once.gpu_util_pct"] = float(m.group(1)) if m else None
    m = re.search(r"(PM sampling[^\n│|]*|GPM[^\n│|]*)", screen)
    out["top-once.source"] = m.group(1).strip() if m else None
    return out


def bench_figures(work):
    files = glob.glob(f"{work}/bench-copy/**/bench.json", recursive=True)
    b = load_json(files[0]) if files else None
    if not b:
        return {}
    out = {}
    gpus = b.get("gpus") or [b]
    g = gpus[0]
    out["bench-copy.rounds_kept"] = len(g.get("kept_rounds") or [])
    for s in g.get("statistics") or []:
        if s.get("key") in ("die_util_pct", "gpu_util_pct", "unit.dram", "dram"):
            out[f"bench-copy.{s['key']}.mean"] = s.get("mean")
            out[f"bench-copy.{s['key']}.sd"] = s.get("sd")
    return out


def calibrate_figures(work):
    c = load_json(f"{work}/calibration.json")
    if not c:
        return {}
    out = {}
    for u in c.get("units") or []:
        out[f"calibrate.{u.get('key')}.verdict"] = u.get("verdict")
        out[f"calibrate.{u.get('key')}.ceiling_pct"] = u.get("ceiling_pct")
    return out


def collect(work):
    fig = {}
    for name in ("run-ffma66", "run-copy"):
        fig.update(run_figures(work, name))
    fig.update(top_figures(work))
    for name in ("agent-alone", "agent-ncu"):
        fig.update(agent_figures(work, name))
    fig.update(bench_figures(work))
    fig.update(calibrate_figures(work))
    json.dump(fig, sys.stdout, indent=1, sort_keys=True)
    print()


def fmt(v):
    if isinstance(v, float):
        return f"{v:.2f}" if math.isfinite(v) else str(v)
    return "" if v is None else str(v)


def compare(before_path, after_path):
    before, after = load_json(before_path) or {}, load_json(after_path) or {}
    print("| figure | before | after | after − before |")
    print("| --- | ---: | ---: | ---: |")
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        diff = ""
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            diff = f"{a - b:+.2f}"
        print(f"| {key} | {fmt(b)} | {fmt(a)} | {diff} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "collect":
        collect(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
