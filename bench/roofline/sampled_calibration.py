#!/usr/bin/env python3
"""The H200 data the sampled backend's constants are set from (docs/roofline.md#sampled-constants).

    sampled_calibration.py RUN.dsrec[.gz] [RUN.sampled.txt]...

For each recording sampled_backend.sh kept (the program under the PM sampler at 0.5 ms), over the
whole run, not only inside regions:
  - how SM active is spread over the samples (idle against busy: the threshold);
  - every stretch of touching samples at or above 0.01% SM active: its length, mean, its edge samples
    and the lowest sample strictly inside it (a dip inside a kernel: the gap), and the DRAM bytes;
  - the idle spaces between stretches (two kernels apart: the gap must not join them);
  - the NVML SM clock and throttle reasons the recording polled every 100 ms (what the GPU ran at).
With the library's file beside it, each stretch is named by the region it falls in.
"""
import bisect
import gzip
import json
import sys


def opener(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def load(path):
    samples, clocks, meta = [], [], None
    for line in opener(path):
        kind = line.split(" ", 1)[0]
        if kind == "meta":
            meta = json.loads(line[5:])
        elif kind == "chip":
            t = line.split()
            nu, nd = len(meta["units"]), len(meta["diagnostics"])
            keys = [d["key"] for d in meta["diagnostics"]]
            counts = [c["key"] for c in meta["counts"]]
            act = float(t[3 + nu + keys.index("sm_active")])
            byt = float(t[3 + nu + nd + counts.index("dram_bytes")])
            samples.append((int(t[1]), int(t[2]), act, byt))
        elif kind in ("clock", "throttle"):
            clocks.append(line.split())
    return samples, clocks


def regions(path):
    """(name, from, to) on CLOCK_REALTIME from the library's file."""
    offset, out = 0, []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "clock":
            offset = int(f[2]) - int(f[1])
        elif f[0] == "row" and f[1]:
            out.append((f[1], int(f[6]) + offset, int(f[7]) + offset))
    return out


def main():
    args = sys.argv[1:]
    for i, path in enumerate(args):
        if path.endswith(".txt"):
            continue
        samples, clocks = load(path)
        regs = regions(args[i + 1]) if i + 1 < len(args) and args[i + 1].endswith(".txt") else []
        t0 = samples[0][0]
        print(f"== {path}: {len(samples)} samples")
        edges = [0, 0.01, 1, 5, 20, 50, 90, 100.1]
        hist = [0] * (len(edges) - 1)
        for s in samples:
            hist[bisect.bisect_right(edges, s[2]) - 1] += 1
        print("SM active [%] from-to: samples  " +
              ", ".join(f"{edges[k]:g}-{edges[k + 1]:g}: {hist[k]}" for k in range(len(hist))))
        runs, cur = [], None
        for k, s in enumerate(samples):
            if s[2] >= 0.01:
                if cur and s[0] - samples[cur[1]][1] <= 0:
                    cur[1] = k
                else:
                    cur = [k, k]
                    runs.append(cur)
        print("start_ms\tlength_ms\tsamples\tmean_pct\tfirst_pct\tlast_pct\tlowest_inside_pct\tdram_bytes\tregion\t"
              "idle_before_ms")
        prev_end = None
        for a, b in runs:
            acts = [samples[k][2] for k in range(a, b + 1)]
            inside = acts[1:-1]
            mid = (samples[a][0] + samples[b][1]) // 2
            name = next((n for n, f, t in regs if f <= mid <= t), "-")
            idle = "" if prev_end is None else f"{(samples[a][0] - prev_end) / 1e6:.3f}"
            print(f"{(samples[a][0] - t0) / 1e6:.3f}\t{(samples[b][1] - samples[a][0]) / 1e6:.3f}\t{b - a + 1}\t"
                  f"{sum(acts) / len(acts):.2f}\t{acts[0]:.2f}\t{acts[-1]:.2f}\t"
                  f"{min(inside) if inside else float('nan'):.2f}\t"
                  f"{sum(samples[k][3] for k in range(a, b + 1)):.4g}\t{name}\t{idle}")
            prev_end = samples[b][1]
        for n, f, t in regs:
            inside = [c for c in clocks if f - 100_000_000 <= int(c[1]) <= t + 100_000_000]
            print(f"NVML around {n} ({(f - t0) / 1e6:.1f}-{(t - t0) / 1e6:.1f} ms): " +
                  "; ".join(f"{(int(c[1]) - t0) / 1e6:.0f} ms {c[0]} {' '.join(c[2:])}" for c in inside))


if __name__ == "__main__":
    main()
