#!/usr/bin/env python3
"""Reads `diescope run` recordings (bench/run/end_to_end.sh) and sets each unit's mean over
the workload's marked window beside the work the workload counted itself (its JSON line).
Samples split by a decode (CUPTI's incomplete first sample of a drain; any unit above 200% of peak,
which no counter can read) are counted and left out, as the fixed sampler now does at the source.
Usage: window_vs_known_work.py DIR (holding NAME/gpu0.dsrec[.gz] and NAME.stdout or NAME/NAME.stdout)"""
import gzip
import json
import os
import sys


def read(path):
    meta, chips, marks = None, [], []
    for line in (gzip.open(path, 'rt') if path.endswith('.gz') else open(path)):
        p = line.split(' ', 1)
        if p[0] == 'meta':
            meta = json.loads(p[1])
        elif p[0] == 'chip':
            f = line.split()
            chips.append((int(f[1]), int(f[2]), [float(x) for x in f[3:]]))
        elif p[0] == 'mark':
            f = line.split()
            marks.append((int(f[1]), f[2]))
    return meta, chips, marks


def main(d):
    for name in sorted(os.listdir(d)):
        rec = os.path.join(d, name, 'gpu0.dsrec')
        if not os.path.exists(rec):
            rec += '.gz'
        if not os.path.exists(rec):
            continue
        meta, chips, marks = read(rec)
        work = None
        out = os.path.join(d, name + '.stdout')
        if not os.path.exists(out):
            out = os.path.join(d, name, name + '.stdout')
        if os.path.exists(out):
            for line in open(out):
                if line.startswith('{'):
                    work = json.loads(line)
        starts = [t for t, k in marks if k == 'start']
        stops = [t for t, k in marks if k == 'stop']
        if not starts or not stops:
            print(f'{name}: {len(chips)} samples, no window')
            continue
        lo, hi = starts[0], stops[-1]
        nu, nd = len(meta['units']), len(meta['diagnostics'])
        inside = [c for c in chips if c[0] >= lo and c[1] <= hi and c[1] > c[0]]
        split = [c for c in inside if any(v == v and v > 200 for v in c[2][:nu])]
        good = [c for c in inside if c not in split]
        span = sum(c[1] - c[0] for c in good) / 1e9
        print(f'{name}: window {(hi - lo) / 1e9:.3f} s, {len(inside)} samples inside, {len(split)} split by a decode '
              f'(left out; their FP32 read {", ".join(f"{c[2][0]:.4g}" for c in split)}%)')
        keys = [u['key'] for u in meta['units']] + [u['key'] for u in meta['diagnostics']] + \
               [u['key'] for u in meta['counts']]
        for j, key in enumerate(keys):
            vals = [c[2][j] for c in good if c[2][j] == c[2][j]]
            if not vals:
                continue
            if j < nu + nd:
                print(f'   {key:<16} mean {sum(vals) / len(vals):9.3f} %')
            else:
                print(f'   {key:<16} rate {sum(vals) / span / 1e9:9.1f} GB/s over {span:.3f} s')
        if work:
            r = work.get('result', {})
            if 'expected_fma_pipe_pct' in r:
                print(f'   workload: expected FMA pipe {r["expected_fma_pipe_pct"]:.3f} % of the device '
                      f'({r.get("tflops", 0):.2f} TFLOP/s at {work.get("clock", {}).get("sm_mhz", 0):.0f} MHz)')
            if 'gb_per_s' in r:
                print(f'   workload: {r["gb_per_s"]:.1f} GB/s by its own byte count over its event time')


if __name__ == '__main__':
    main(sys.argv[1])
