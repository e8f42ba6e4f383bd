#!/usr/bin/env python3
"""Reads the sampler's protocol output (the raw *.out and *.load files bench/sampler/device_checks.sh
leaves in its WORK folder) and prints:
per-phase metric means against the load's own counts, sample timing (runs of samples CUPTI gave no
time, holes), and drain cost. Usage: protocol_analysis.py DIR"""
import os
import sys


def load(path):
    samples, names, other = [], [], []
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == 's':
            samples.append((int(p[1]), int(p[2]), [float(x) for x in p[3:]]))
        elif p[0] == 'metrics':
            names = p[2:]
        else:
            other.append(line.rstrip())
    return samples, names, other


def phases(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            p = line.split()
            if p and p[0] == 'phase':
                out.append((p[1], int(p[2]), int(p[3]), ' '.join(p[4:])))
    return out


def timing(name, samples, other, interval_ns):
    # A run of samples with end <= start has no time from CUPTI; compare its length with the hole
    # between the good samples around it.
    runs, holes, i = [], [], 1
    last_good = samples[0]
    while i < len(samples):
        if samples[i][1] <= samples[i][0]:
            j = i
            while j < len(samples) and samples[j][1] <= samples[j][0]:
                j += 1
            hole = (samples[j][0] - last_good[1]) / interval_ns if j < len(samples) else float('nan')
            runs.append((j - i, hole))
            i = j
        else:
            if samples[i][0] - last_good[1] > interval_ns / 2:
                holes.append((samples[i][0] - last_good[1]) / interval_ns)
            last_good = samples[i]
            i += 1
    untimed = sum(r for r, _ in runs)
    lost = sum(max(0, round(h) - r) for r, h in runs if h == h)
    drains = [int(l.split()[3]) for l in other if l.startswith('drain ')]
    counts = [int(l.split()[2]) for l in other if l.startswith('drain ')]
    print(f'{name}: {len(samples)} samples at {interval_ns/1e6:g} ms; {len(runs)} runs of untimed samples '
          f'({untimed} samples, {untimed/len(samples)*100:.2f}%); runs vs holes (in intervals): '
          f'{[(r, round(h, 3)) for r, h in runs[:6]]}{" ..." if len(runs) > 6 else ""}; '
          f'samples lost outright (hole longer than its run): {lost}; '
          f'overflow lines {sum(l.startswith("overflow") for l in other)}')
    if drains:
        print(f'   drains {len(drains)}, samples per drain mean {sum(counts)/len(counts):.0f}, '
              f'decode wall mean {sum(drains)/len(drains)/1e3:.1f} ms, max {max(drains)/1e3:.1f} ms')


def main(d):
    for name in sorted(os.listdir(d)):
        if not name.endswith('.out'):
            continue
        samples, names, other = load(os.path.join(d, name))
        if len(samples) < 3:
            continue
        durations = sorted(e - s for s, e, _ in samples[1:] if e > s)
        interval = durations[len(durations) // 2]
        timing(name[:-4], samples, other, interval)
        for ph, a, b, extra in phases(os.path.join(d, name[:-4] + '.load')):
            inside = [s for s in samples[1:] if s[0] >= a and s[1] <= b and s[1] > s[0]]
            if not inside or ph == 'idle':
                continue
            span = sum(s[1] - s[0] for s in inside) / 1e9
            print(f'   phase {ph} ({len(inside)} samples inside, {extra})')
            for j, n in enumerate(names):
                mean = sum(s[2][j] for s in inside) / len(inside)
                print(f'      {n:<96} {mean:.4g}')
            for j, n in enumerate(names):
                if n == 'dram__bytes.sum':
                    print(f'      dram__bytes.sum rate: {sum(s[2][j] for s in inside)/span/1e9:.1f} GB/s')


if __name__ == '__main__':
    main(sys.argv[1])
