#!/usr/bin/env python3
"""The best repeat of each STREAM kernel in each form that `diescope calibrate` timed, as one CSV.

    stream_table.py WORKLOAD_JSONL[.gz] [CALIBRATION_JSON]

WORKLOAD_JSONL is the kernels' own output that `diescope calibrate --keep` leaves in its scratch
folder (workload.jsonl); its `"calibrate":"stream"` line lists each form's best time (`forms`, or
`grids` of the grid-strided loop in older files). With CALIBRATION_JSON, each rate is also given as a
percent of the DRAM peak that file's DRAM steps imply (the median over the counted steps).
Columns: kernel, form, blocks, threads_per_block, best_s, bytes, tb_per_s, pct_of_implied_peak.
"""
import gzip
import json
import statistics
import sys

VECTORS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}  # vectors each kernel reads or writes


def implied_peak(path):
    units = json.load(open(path))["units"]
    dram = next(u for u in units if u["key"] == "dram")
    return statistics.median(s["implied_peak"] for s in dram["check"]["steps"] if s.get("counted"))


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit("usage: stream_table.py WORKLOAD_JSONL[.gz] [CALIBRATION_JSON]")
    path = sys.argv[1]
    lines = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    stream = next(json.loads(line) for line in lines if '"calibrate":"stream"' in line)
    peak = implied_peak(sys.argv[2]) if len(sys.argv) == 3 else None
    elements = stream["points"][0]["elements"]
    forms = stream.get("forms") or [
        dict(g, form=f"loop {g['blocks_per_sm']}/SM", blocks=None) for g in stream["grids"]]
    print("kernel,form,blocks,threads_per_block,best_s,bytes,tb_per_s,pct_of_implied_peak")
    for f in forms:
        nbytes = VECTORS[f["kernel"]] * elements * 4
        rate = nbytes / f["best_seconds"]
        pct = f"{100 * rate / peak:.1f}" if peak else ""
        blocks = "" if f.get("blocks") is None else f"{f['blocks']:.0f}"
        print(f"{f['kernel']},{f['form']},{blocks},{f['threads_per_block']},{f['best_seconds']:.9f},{nbytes},"
              f"{rate / 1e12:.3f},{pct}")


if __name__ == "__main__":
    main()
