#!/usr/bin/env python3
"""What the agent recorded in each round of bench/agent/cost_rounds.sh, one CSV row per round.

    agent_records.py RAW_FOLDER

RAW_FOLDER holds the agents' NDJSON output (agent-ROUND-SETTING.ndjson) and agents.txt (their exit
codes). Columns: round, setting, exit code, records, seconds the counters were on (summed over the
records), the SM and memory clocks the records saw (lowest and highest), and the mean DIE-Util and
GPU-Util over the records.
"""
import json
import pathlib
import re
import sys


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: agent_records.py RAW_FOLDER")
    raw = pathlib.Path(sys.argv[1])
    codes = {}
    agents = raw / "agents.txt"
    if agents.exists():
        for line in agents.read_text().splitlines():
            m = re.match(r"agent (\d+) (\w+) rc=(\d+)", line)
            if m:
                codes[(int(m.group(1)), m.group(2))] = m.group(3)
    print("round,setting,rc,records,counters_on_s,sm_mhz_min,sm_mhz_max,mem_mhz_min,mem_mhz_max,die_util_pct,gpu_util_pct")
    files = []
    for path in raw.glob("agent-*.ndjson"):
        m = re.match(r"agent-(\d+)-(\w+)\.ndjson", path.name)
        if m:
            files.append((int(m.group(1)), m.group(2), path))
    for r, setting, path in sorted(files):
        recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        on = sum(x.get("counters_on_s") or 0 for x in recs)
        sm = [x["clocks"]["sm"] for x in recs if x.get("clocks", {}).get("sm", {}).get("readings")]
        mem = [x["clocks"]["mem"] for x in recs if x.get("clocks", {}).get("mem", {}).get("readings")]
        die = [x["chip"]["die_util_pct"] for x in recs if x.get("chip", {}).get("die_util_pct") is not None]
        util = [x["gpu_util"]["pct"] for x in recs if x.get("gpu_util", {}).get("pct") is not None]

        def low_high(clocks):
            if not clocks:
                return ","
            return f"{min(c['min_mhz'] for c in clocks):.0f},{max(c['max_mhz'] for c in clocks):.0f}"

        def mean(values):
            return f"{sum(values) / len(values):.1f}" if values else ""

        print(f"{r},{setting},{codes.get((r, setting), '')},{len(recs)},{on:.2f},{low_high(sm)},{low_high(mem)},"
              f"{mean(die)},{mean(util)}")


if __name__ == "__main__":
    main()
