#!/usr/bin/env python3
"""ResNet-50's DRAM bytes per region, backend by backend, from resnet50_backends.sh's OUT_DIR.

    resnet50_bytes.py OUT_DIR > bytes.csv

One row per region of the profiled step (the third: ncu profiles only it) and measure. Columns:
  ncu (all)    ncu's kernel replay with its default cache control: the caches flushed before every
               kernel, each kernel alone; the launches of the region added;
  ncu (none)   the same without the flush: each kernel still alone, after the previous one's replay;
  range        diescope's range profiler on the pipelined run (roofline table, all pass groups);
  range split  the range library with one pass group of DRAM bytes read and written;
  sampled      the sampled backend (PM sampling of the pipelined run, kernel windows of the region).
Ratios to ncu (all), the cache control diescope's ncu tables use, and to ncu (none), the one closer
to the pipelined run the other backends measure (docs/roofline.md#dram-bytes-and-the-cache-flush).
"""
import csv
import os
import sys

SPLIT = ["dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum", "gpu__time_duration.sum"]
PUSH = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"


def region_of(row):
    """The NVTX region of one ncu launch: the innermost push/pop range, else the start/end range."""
    for col, lead in ((PUSH, 1), (START, 2)):
        items = row.get(col, "").split('"')[1::2]
        if items:
            return items[-1].split(":")[lead]
    return ""


def ncu_sums(path):
    lines = [line for line in open(path) if line.startswith('"')]
    rows = list(csv.DictReader(lines))
    units, rows = rows[0], rows[1:]
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
             "s": 1}
    sums = {}
    for r in rows:
        reg = sums.setdefault(region_of(r), dict.fromkeys(SPLIT, 0.0) | {"launches": 0})
        reg["launches"] += 1
        for m in SPLIT:
            reg[m] += float(r[m].replace(",", "")) * scale[units[m]]
    return sums


def step_rows(path, step=3):
    """Each region's row of the profiled step in a roofline table (its rows are in the order the
    regions closed); a region with fewer rows (a sampled region that showed no activity) has none."""
    seen = {}
    for r in csv.DictReader(open(path)):
        seen.setdefault(r["region"], []).append(r)
    return {k: v[step - 1] for k, v in seen.items() if len(v) == step}


def split_rows(path):
    metrics, out = [], {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "metrics":
            metrics = f[1:]
        elif f[0] == "row":
            if int(f[2]) == 3:  # the occurrence: the profiled step
                out[f[1]] = dict(zip(metrics, map(float, f[8:]))) | {"launches": int(f[4])}
    return out


def main():
    d = sys.argv[1]
    ncu_all = ncu_sums(os.path.join(d, "ncu-all.csv"))
    ncu_none = ncu_sums(os.path.join(d, "ncu-none.csv"))
    rng = step_rows(os.path.join(d, "range.csv"))
    smp = step_rows(os.path.join(d, "sampled.csv"))
    spl = split_rows(os.path.join(d, "split-range.txt"))
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["region", "measure", "ncu (all)", "ncu (none)", "range", "range split", "sampled",
                "ncu (none)/ncu (all)", "range/ncu (all)", "sampled/ncu (all)", "range/ncu (none)",
                "range split/ncu (none)", "sampled/ncu (none)", "sampled/range"])

    def ratio(a, b):
        return f"{a / b:.4f}" if a == a and b == b and b else ""

    def num(v):
        return f"{v:.6g}" if v == v else ""

    for region in ("forward", "backward", "optimizer"):
        a, n, s = ncu_all.get(region), ncu_none.get(region), spl.get(region, {})
        r, p = rng.get(region, {}), smp.get(region, {})
        if not a:
            continue
        nan = float("nan")

        def cell(row, key):
            v = row.get(key, "")
            return float(v) if v not in ("", None) else nan

        measures = [
            ("launches", a["launches"], n["launches"], cell(r, "launches"), s.get("launches", nan),
             cell(p, "launches")),
            ("dram read [B]", a[SPLIT[0]], n[SPLIT[0]], nan, s.get(SPLIT[0], nan), nan),
            ("dram write [B]", a[SPLIT[1]], n[SPLIT[1]], nan, s.get(SPLIT[1], nan), nan),
            ("dram bytes [B]", a[SPLIT[2]], n[SPLIT[2]], cell(r, "bytes dram [B]"), s.get(SPLIT[2], nan),
             cell(p, "bytes dram [B]")),
            ("duration [s]", a[SPLIT[3]], n[SPLIT[3]], cell(r, "duration [s]"), s.get(SPLIT[3], nan) * 1e-9,
             cell(p, "duration [s]")),
        ]
        for name, va, vn, vr, vs, vp in measures:
            w.writerow([region, name, num(va), num(vn), num(vr), num(vs), num(vp), ratio(vn, va), ratio(vr, va),
                        ratio(vp, va), ratio(vr, vn), ratio(vs, vn), ratio(vp, vn), ratio(vp, vr)])


if __name__ == "__main__":
    main()
