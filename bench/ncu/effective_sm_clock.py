#!/usr/bin/env python3
"""The SM clock a PyTorch workload's kernels actually run at inside its window, read from inside the GPU.

    effective_sm_clock.py --lib libsmclockprobe.so [--probe-ms MS] [--cover-s S] -- WORKLOAD.py ARGS...
    effective_sm_clock.py --summarise PROBES.json

Runs WORKLOAD.py (one of workloads/pytorch/, which print `diescope: measure start` and `measure stop`
around their timed steps) in this process. First, on a GPU with nothing else running, probes alone.
At `measure start` a one-thread kernel starts on a side stream (bench/ncu/sm_clock_probe.cu) and runs
a chain of probes: each spins for a fixed number of SM cycles and records, from inside the
kernel, how many nanoseconds (%globaltimer) that took, so cycles over nanoseconds is the clock its SM
ran at while the workload's kernels ran beside it. Queueing before a probe starts does not count. Two
stamps on the workload's stream (at `measure start` and after `measure stop`'s synchronise) bound the
window; only probes wholly inside it count. The chain covers the first --cover-s seconds of the window.

Prints one JSON line {"sm_clock_probes": {...}}: the effective clock alone and inside the window
(total cycles over total nanoseconds), the spread of the probes inside (min, median, max), how many
and the share of the window they covered. Run it under `diescope run --window markers` and the same
report holds NVML's SM clock and diescope's unit means over the same window
(docs/method.md#comparing-with-nsight-compute).

--summarise reads the raw probe list this script writes with --raw and prints the summary again
(the maths without a GPU).
"""
import argparse
import builtins
import ctypes
import json
import math
import os
import runpy
import sys


def summarise(alone, inside, window_ns, probe_ns_nominal=None):
    """alone, inside: lists of (cycles, ns). The effective clock of each list (sum of cycles over sum of
    ns, MHz), the spread of inside's per-probe clocks, and the covered share of window_ns."""
    def clock(rows):
        ns = sum(r[1] for r in rows)
        return None if not rows or ns <= 0 else sum(r[0] for r in rows) / ns * 1e3

    per = sorted(c / n * 1e3 for c, n in inside if n > 0)

    def pick(q):
        return None if not per else per[min(len(per) - 1, int(q * (len(per) - 1) + 0.5))]

    covered = sum(r[1] for r in inside)
    return {
        "alone_mhz": clock(alone),
        "alone_probes": len(alone),
        "window_mhz": clock(inside),
        "window_probes": len(inside),
        "window_min_mhz": pick(0.0),
        "window_median_mhz": pick(0.5),
        "window_max_mhz": pick(1.0),
        "window_s": window_ns / 1e9 if window_ns else None,
        "covered_share": covered / window_ns if window_ns else None,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", help="the probe library (nvcc -shared bench/ncu/sm_clock_probe.cu)")
    p.add_argument("--probe-ms", type=float, default=2.0, help="each probe's length at 1980 MHz (default 2)")
    p.add_argument("--cover-s", type=float, default=2.0, help="seconds of the window the probe chain covers")
    p.add_argument("--alone-s", type=float, default=0.5, help="seconds of probes alone before the workload")
    p.add_argument("--raw", help="also write every probe (cycles, ns, start) and the window bounds here")
    p.add_argument("--summarise", metavar="RAW.json", help="summarise a --raw file and exit")
    p.add_argument("workload", nargs=argparse.REMAINDER, help="-- WORKLOAD.py ARGS...")
    args = p.parse_args()

    if args.summarise:
        try:
            raw = json.load(open(args.summarise))
            alone = [tuple(r[:2]) for r in raw["alone"]]
            lo, hi = raw["window_ns"]
            inside = [tuple(r[:2]) for r in raw["window"] if r[2] >= lo and r[2] + r[1] <= hi]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"effective_sm_clock: cannot read {args.summarise}: {e}; give a file written by --raw")
        print(json.dumps({"sm_clock_probes": summarise(alone, inside, hi - lo)}))
        return 0

    work = args.workload[1:] if args.workload[:1] == ["--"] else args.workload
    if not work or not work[0].endswith(".py"):
        sys.exit("effective_sm_clock: give the workload after --: -- workloads/pytorch/resnet50_amp.py --infer")
    if not args.lib or not os.path.isfile(args.lib):
        sys.exit(f"effective_sm_clock: --lib {args.lib!r} is not a file; build it with "
                 "nvcc -O2 -shared -Xcompiler -fPIC -arch=sm_90 -o libsmclockprobe.so bench/ncu/sm_clock_probe.cu")
    if not (args.probe_ms > 0 and args.cover_s > 0 and args.alone_s > 0):
        sys.exit("effective_sm_clock: --probe-ms, --cover-s and --alone-s must be positive")

    try:
        import torch
    except ImportError:
        sys.exit("effective_sm_clock: PyTorch is not installed; run it where the workloads run")
    if not torch.cuda.is_available():
        sys.exit("effective_sm_clock: no CUDA device visible to PyTorch; run it on a machine with an NVIDIA GPU")
    lib = ctypes.CDLL(os.path.abspath(args.lib))
    lib.sm_clock_probes.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong]
    lib.sm_clock_stamp.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    cycles = int(args.probe_ms * 1e-3 * 1980e6)
    side = torch.cuda.Stream()

    def probes(n):
        out = torch.zeros(3 * n, dtype=torch.int64, device="cuda")
        rc = lib.sm_clock_probes(ctypes.c_void_p(side.cuda_stream), ctypes.c_void_p(out.data_ptr()), n, cycles)
        if rc:
            sys.exit(f"effective_sm_clock: the probe launch failed (CUDA error {rc})")
        return out

    def stamp(stream):
        out = torch.zeros(1, dtype=torch.int64, device="cuda")
        if lib.sm_clock_stamp(ctypes.c_void_p(stream.cuda_stream), ctypes.c_void_p(out.data_ptr())):
            sys.exit("effective_sm_clock: the stamp launch failed")
        return out

    def rows(out):
        v = out.view(-1, 3).tolist()
        return [r for r in v if r[1] > 0]

    alone_out = probes(max(1, int(args.alone_s * 1e3 / args.probe_ms)))
    torch.cuda.synchronize()
    alone = rows(alone_out)

    state = {}
    real_print = builtins.print

    def print_hook(*a, **k):
        text = " ".join(str(x) for x in a)
        if text == "diescope: measure stop" and "chain" in state:
            # The workload has synchronised: its last kernel is done.
            state["hi"] = stamp(torch.cuda.current_stream())
        real_print(*a, **k)
        if text == "diescope: measure start":
            state["lo"] = stamp(torch.cuda.current_stream())
            torch.cuda.synchronize()
            state["chain"] = probes(max(1, int(args.cover_s * 1e3 / args.probe_ms)))

    builtins.print = print_hook
    sys.argv = work
    # As `python3 WORKLOAD.py` would: the workload's folder first on the path (its shared modules).
    sys.path.insert(0, os.path.dirname(os.path.abspath(work[0])))
    rc = 0
    try:
        runpy.run_path(work[0], run_name="__main__")
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        builtins.print = real_print
    if "hi" not in state:
        sys.exit(f"effective_sm_clock: {work[0]} printed no `diescope: measure start` and `measure stop` (exit {rc})")
    torch.cuda.synchronize()
    lo, hi = int(state["lo"].item()), int(state["hi"].item())
    chain = rows(state["chain"])
    inside = [r for r in chain if r[2] >= lo and r[2] + r[1] <= hi]
    if args.raw:
        with open(args.raw, "w") as f:
            json.dump({"alone": alone, "window": chain, "window_ns": [lo, hi], "probe_cycles": cycles}, f)
    s = summarise([tuple(r[:2]) for r in alone], [tuple(r[:2]) for r in inside], hi - lo)
    print(json.dumps({"sm_clock_probes": s}), flush=True)
    if not math.isfinite(s["window_mhz"] or math.nan):
        print("effective_sm_clock: no probe ran wholly inside the window", file=sys.stderr)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
