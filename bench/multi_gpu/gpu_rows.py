#!/usr/bin/env python3
"""One CSV row per GPU of a `diescope run` output folder, for bench/multi_gpu/ddp_two_gpus.sh.

  gpu_rows.py STEP DIR    prints: STEP,gpu,uuid,span,gpu_util_pct,die_util_pct,limiting_unit,busy,
                                  nvlink_tx_bytes_per_s,nvlink_rx_bytes_per_s
From DIR/gpus.json when the run measured several GPUs (docs/method.md#several-gpus), otherwise from
each report.json in DIR (busy is then empty). A figure that is null is an empty field.
"""
import json
import os
import sys


def row(step, g):
    def field(key):
        return "" if g.get(key) is None else str(g[key])
    return ",".join([step, str(g["index"]), g["uuid"], g["span"], field("gpu_util_pct"), field("die_util_pct"),
                     field("limiting_unit"), field("busy"), field("nvlink_tx_bytes_per_s"),
                     field("nvlink_rx_bytes_per_s")])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    step, d = sys.argv[1], sys.argv[2]
    summary = os.path.join(d, "gpus.json")
    if os.path.exists(summary):
        with open(summary) as f:
            for g in json.load(f)["gpus"]:
                print(row(step, g))
        return 0
    reports = sorted(n for n in os.listdir(d) if n.endswith(".report")) if os.path.isdir(d) else []
    if not reports:
        print(f"gpu_rows.py: no gpus.json and no report in {d}", file=sys.stderr)
        return 1
    for name in reports:
        with open(os.path.join(d, name, "report.json")) as f:
            r = json.load(f)
        found = r["window"]["found"]
        span = r["window"]["results"] if found else r["results"]
        rates = span.get("rates_per_s", {})
        print(row(step, {"index": r["gpu"]["index"], "uuid": r["gpu"]["uuid"], "span": "window" if found else "run",
                         "gpu_util_pct": span["headline"]["gpu_util_pct"],
                         "die_util_pct": span["headline"]["die_util_pct"],
                         "limiting_unit": span.get("limiting_unit_label"), "busy": None,
                         "nvlink_tx_bytes_per_s": rates.get("nvlink_tx_bytes"),
                         "nvlink_rx_bytes_per_s": rates.get("nvlink_rx_bytes")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
