#!/usr/bin/env python3
"""What a report says about the calibration it looked up: one block per report.

    lookup_summary.py NAME=REPORT.json ...

Prints for each report its calibration status and reason, the file taken (name, date, commit,
sha256) or why none was, each unit's verdict, and the files passed over with their reasons.
"""
import json
import sys


def main():
    for arg in sys.argv[1:]:
        name, _, path = arg.partition("=")
        c = json.load(open(path))["calibration"]
        print(f"{name}: status {c['status']}")
        print(f"  reason: {c['reason']}")
        f = c.get("file")
        if f:
            print(f"  file: {f['name']} ({'quick' if f.get('quick') else 'full'}, {f['date']}, commit {f['commit']}, "
                  f"schema {f['schema']}, sha256 {f['sha256']})")
        else:
            print(f"  file: none: {c.get('file_reason', '')}")
        print("  units: " + ", ".join(f"{k} {v}" for k, v in sorted(c.get("units", {}).items())))
        for p in c.get("passed_over", []):
            print(f"  passed over {p.get('name', p)}: {p.get('reason', '')}")


if __name__ == "__main__":
    main()
