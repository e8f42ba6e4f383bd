#!/usr/bin/env python3
"""Whether two build folders register the same CTest tests with the same properties.

    bench/build/ctest_list_diff.py BEFORE_BUILD AFTER_BUILD [OUT.tsv]

Reads `ctest --show-only=json-v1` of each folder and compares, test by test (by name): its labels,
its properties (timeouts, environment, fixtures, locks, RUN_SERIAL, skip and pass rules), its working
folder, whether `-LE gpu` (CPU CI) and `-L gpu` (scripts/gpu-tests.sh) select it, and for a GoogleTest
test its --gtest_filter. The executable a test runs, the build and source folders' own paths and a TEST_P's parameter bytes are left out: the
point is that moving tests between binaries changes nothing else (docs/building.md#one-test-binary-per-part).
OUT.tsv, where given, gets one line per test: name, labels, properties. Exits 1 on any difference.
"""
import json
import os
import subprocess
import sys

IGNORED = {"_BACKTRACE_TRIPLES"}


def tests_of(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    root = os.path.realpath(build)
    source = None
    with open(os.path.join(build, "CMakeCache.txt")) as cache:
        for line in cache:
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                source = line.split("=", 1)[1].strip()
    tests = {}
    for t in json.loads(out)["tests"]:
        props = {}
        for p in t.get("properties", []):
            if p["name"] in IGNORED:
                continue
            value = json.dumps(p["value"], sort_keys=True).replace(root, "BUILD")
            if source:
                value = value.replace(source, "SOURCE")
            props[p["name"]] = value
        command = t.get("command", [])
        gtest_filter = [a.split("  # GetParam()")[0] for a in command if a.startswith("--gtest_filter=")]
        props["gtest_filter"] = gtest_filter[0] if gtest_filter else ""
        # A TEST_P's name as GoogleTest lists it ends with its parameter's bytes, which differ by build.
        name = t["name"].split("  # GetParam()")[0]
        if name in tests:
            props["DUPLICATE"] = "yes"
        tests[name] = props
    return tests


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench/build/ctest_list_diff.py BEFORE_BUILD AFTER_BUILD [OUT.tsv]")
    before, after = tests_of(sys.argv[1]), tests_of(sys.argv[2])
    differences = 0
    for name in sorted(set(before) | set(after)):
        if name not in after:
            print(f"only before: {name}")
            differences += 1
        elif name not in before:
            print(f"only after: {name}")
            differences += 1
        elif before[name] != after[name]:
            keys = sorted(set(before[name]) | set(after[name]))
            for k in keys:
                if before[name].get(k) != after[name].get(k):
                    print(f"{name}: {k}: {before[name].get(k)} -> {after[name].get(k)}")
            differences += 1
    gpu = sum(1 for p in after.values() if '"gpu"' in p.get("LABELS", ""))
    print(f"{len(before)} tests before, {len(after)} after ({gpu} labelled gpu); {differences} differ")
    if len(sys.argv) == 4:
        with open(sys.argv[3], "w") as f:
            for name in sorted(after):
                p = after[name]
                rest = ";".join(f"{k}={v}" for k, v in sorted(p.items()) if k not in ("LABELS", "gtest_filter"))
                f.write(f"{name}\t{p.get('LABELS', '')}\t{rest}\n")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
