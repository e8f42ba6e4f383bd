#!/usr/bin/env python3
"""Per-scrape times of bench/footprint/metrics_scrape (--times FILE) split into the first burst and
the later ones: p50, p99 and max of each scrape's latency (from its connect) and of its time from
the burst's start, and, for the first burst, the largest gap between two consecutive connects of one
client thread (a stall of every thread at once is the process's file descriptor table growing:
docs/footprint.md#the-agents-own-cost).

    scrape_rounds.py TIMES.tsv [...] [--threads 4]
"""
import csv
import sys


def pick(values, f):
    return values[min(len(values) - 1, int(f * len(values)))] if values else float("nan")


def main():
    args = sys.argv[1:]
    threads = 4
    if "--threads" in args:
        i = args.index("--threads")
        threads = int(args[i + 1])
        del args[i:i + 2]
    print("file\tbursts\tscrapes\tp50_ms\tp99_ms\tmax_ms\tfrom_start_p99_ms\tfrom_start_max_ms\tthread_stall_ms")
    for path in args:
        rows = [r for r in csv.DictReader(open(path), delimiter="\t") if r["ok"] == "1"]
        scrapers = max(int(r["scraper"]) for r in rows) + 1
        for label, keep in (("all", lambda r: True), ("first", lambda r: r["round"] == "0"),
                            ("later", lambda r: r["round"] != "0")):
            sel = [r for r in rows if keep(r)]
            lat = sorted(float(r["latency_us"]) / 1e3 for r in sel)
            start = sorted((float(r["start_us"]) + float(r["latency_us"])) / 1e3 for r in sel)
            stall = float("nan")
            if label == "first":
                # Scrapers are shared among the threads in order (metrics_scrape: scraper i of
                # n goes to thread i * threads // n); the largest step between consecutive connects.
                by_thread = {}
                for r in sel:
                    by_thread.setdefault(int(r["scraper"]) * threads // scrapers, []).append(float(r["start_us"]) / 1e3)
                stall = max((b - a for v in by_thread.values() for a, b in zip(sorted(v), sorted(v)[1:])), default=0.0)
            print(f"{path.rsplit('/', 1)[-1]}\t{label}\t{len(sel)}\t{pick(lat, .5):.3f}\t{pick(lat, .99):.3f}\t"
                  f"{lat[-1]:.3f}\t{pick(start, .99):.3f}\t{start[-1]:.3f}\t{stall:.3f}")


if __name__ == "__main__":
    main()
