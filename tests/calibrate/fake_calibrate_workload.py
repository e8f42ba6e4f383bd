#!/usr/bin/env python3
# A stand-in for `diescope-workload calibrate` in the CPU end-to-end test of `diescope calibrate`
# (calibrate_cli_test): prints the protocol's lines (calibrate/device_protocol.hpp) with real
# timestamps and made-up work. Nothing it prints is a measurement.
import json, sys, time
def out(o): print(json.dumps(o), flush=True)
args = sys.argv[1:]
assert args[0] == "calibrate"
out({"calibrate": "device", "device": {"name": "NVIDIA H200", "sm_count": 132, "l2_bytes": 52428800}})
if "--probe" in args: time.sleep(0.3); sys.exit(0)
plan = json.load(open(args[args.index("--plan") + 1]))
print("diescope: measure start", flush=True)
idx = 0
for s in plan["steps"]:
    idx = s["index"]
    out({"calibrate": "begin", "index": idx, "name": s["name"]})
    dur = 0.25
    t0 = time.time_ns()
    launches = []
    t = t0
    while t < t0 + int(dur * 1e9):
        launches.append([t, t + 10_000_000]); t += 10_000_000 + 1000
    time.sleep(dur)
    out({"calibrate": "step", "index": idx, "name": s["name"], "unit": s["unit"], "workload": s["workload"],
         "loaded_sms": s["loaded_sms"], "sm_count": 132, "work": 1e9 * s["loaded_sms"], "peak_per_sm_per_cycle": 4,
         "sm_clock_mhz": 1980.0, "launches": launches, "window": [t0 + 50_000_000, launches[-1][1] - 50_000_000]})
idx += 1; out({"calibrate": "begin", "index": idx, "name": "stream"})
out({"calibrate": "stream", "points": [{"kernel": k, "elements": 1 << 26, "seconds": [0.0002, 0.00021]} for k in ["copy", "scale", "add", "triad"]]})
if plan["working_set"]:
    idx += 1; out({"calibrate": "begin", "index": idx, "name": "working-set sweep"})
    out({"calibrate": "working_set", "points": [{"k": k, "working_set_bytes": k * 131072, "requested_bytes": k * 131072, "distinct_bytes": k * 5120, "seconds": k * 1e-8} for k in plan["working_set"]["ks"]]})
    out({"calibrate": "reread", "points": [{"k": 4, "working_set_bytes": m << 20, "requested_bytes": 4 * (m << 20), "distinct_bytes": m << 20, "seconds": 4 * (m << 20) / (9e12 if m < 50 else 3.5e12)} for m in [8, 16, 32, 48, 64, 128, 256]]})
if plan["launch"]:
    idx += 1; out({"calibrate": "begin", "index": idx, "name": "launch-fill sweep"})
    pts = []
    for g in plan["launch"]["geometries"]:
        th = (g["bm"] // g["tm"]) * (g["bn"] // g["tn"])
        for size in plan["launch"]["sizes"]:
            if size % g["bm"]: continue
            blocks = (size // g["bm"]) ** 2; ops = 2.0 ** 31
            fill = min(1.0, blocks * th / (132 * 512))
            pts.append({"geometry": g["name"], "m": size, "n": size, "k": 1024, "seconds": ops / (2e13 * fill), "contexts": [{"blocks": blocks, "threads_per_block": th, "scalar_ops": ops, "mma_ops": 0}]})
    out({"calibrate": "launch", "points": pts})
if plan["issue"]:
    idx += 1; out({"calibrate": "begin", "index": idx, "name": "issue-rate sweep"})
    out({"calibrate": "issue", "points": [{"k": k, "scalar_ops": 2.0 * 512 * 512 * k, "mma_ops": 0, "kernels": 1, "seconds": 5e-6 + 2.0 * 512 * 512 * k / 1e13, "contexts": [{"blocks": 64, "threads_per_block": 256, "scalar_ops": 2.0 * 512 * 512 * k, "mma_ops": 0}]} for k in plan["issue"]["ks"]]})
print("diescope: measure stop", flush=True)
out({"calibrate": "done"})
