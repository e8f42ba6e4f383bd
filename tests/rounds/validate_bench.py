#!/usr/bin/env python3
"""Validates every bench.json the test suite wrote against docs/bench.schema.json.

Beyond the schema it checks what a schema cannot say:
  - a null figure has '<name>_reason' (or 'reason') beside it, a non-empty string;
  - rounds are numbered 1..rounds_run, and per GPU the kept and left-out rounds split them exactly,
    agreeing with each round's own 'kept' flag;
  - enough_rounds is true exactly when at least rule.min_kept_rounds rounds were kept;
  - every statistic is what its kept rounds' figures give: n, mean, sample sd, min, max, and the
    interval mean -+ t * sd / sqrt(n) with t the 0.975 quantile of Student's t for n-1 degrees of
    freedom (published values to 4 decimals below).
Fails when the folder holds no bench.json. With --self-test it also breaks a valid file in several
ways and fails unless each broken copy is rejected.
"""
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from schema_check import (accepted_breakages, check_files, load_validator, named,  # noqa: E402
                          null_reason_problems, parse_args, self_test_status, sorted_schema_problems)

# Published t(0.975; df), df 1..30, to 4 decimals (any statistics table).
T975 = [12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
        2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
        2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423]


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def round_problems(bench):
    problems = []
    numbers = [r["round"] for r in bench["rounds"]]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"rounds are numbered {numbers}, not 1..{len(numbers)}")
    if bench["rounds_run"] != len(numbers):
        problems.append(f"rounds_run {bench['rounds_run']} but {len(numbers)} rounds listed")
    if len(numbers) > bench["rounds_requested"]:
        problems.append("more rounds run than requested")
    for gpu in bench["gpus"]:
        where = f"$.gpus[index={gpu['index']}]"
        kept = gpu["kept_rounds"]
        left = [l["round"] for l in gpu["left_out"]]
        if sorted(kept + left) != numbers:
            problems.append(f"{where}: kept {kept} and left out {left} do not split the rounds {numbers}")
        if gpu["enough_rounds"] != (len(kept) >= bench["rule"]["min_kept_rounds"]):
            problems.append(f"{where}: enough_rounds is {gpu['enough_rounds']} with {len(kept)} kept")
        by_round = {}
        for r in bench["rounds"]:
            for g in r["gpus"]:
                if g["index"] == gpu["index"]:
                    by_round[r["round"]] = g
                    if g["kept"] != (r["round"] in kept):
                        problems.append(f"{where}: round {r['round']} says kept={g['kept']}, the GPU's lists disagree")
        for s in gpu["statistics"]:
            values, missing = [], []
            for n in kept:
                v = by_round.get(n, {}).get("figures", {}).get(s["key"])
                (values if isinstance(v, (int, float)) else missing).append(v if isinstance(v, (int, float)) else n)
            problems += statistic_problems(s, values, missing, f"{where}.statistics[{s['key']}]")
    return problems


def statistic_problems(s, values, missing, where):
    problems = []
    n = len(values)
    if s["n"] != n or s["missing_in"] != missing:
        return [f"{where}: n {s['n']} / missing {s['missing_in']}, the kept rounds give n {n} / missing {missing}"]
    if n == 0:
        return [] if s["mean"] is None else [f"{where}: a mean with no values"]
    mean = sum(values) / n
    checks = {"mean": mean, "min": min(values), "max": max(values)}
    if n >= 2:
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
        checks["sd"] = sd
        df = n - 1
        if df <= len(T975) and not abs(s["t"] - T975[df - 1]) < 6e-5:
            problems.append(f"{where}: t {s['t']} for {df} degrees of freedom, published {T975[df - 1]}")
        if df > len(T975) and not 1.9599 < s["t"] < T975[-1]:
            problems.append(f"{where}: t {s['t']} outside (1.96, t(30)) for {df} degrees of freedom")
        half = s["t"] * sd / math.sqrt(n)
        checks.update(ci95_half_width=half, ci95_low=mean - half, ci95_high=mean + half)
    else:
        for key in ("sd", "t", "ci95_low", "ci95_high", "ci95_half_width"):
            if s[key] is not None:
                problems.append(f"{where}: {key} with a single value")
    for key, expected in checks.items():
        got = s[key]
        if not isinstance(got, (int, float)) or not close(got, expected, 1e-7):
            problems.append(f"{where}: {key} = {got}, the kept rounds give {expected}")
    return problems


def problems_of(bench, validator):
    problems = sorted_schema_problems(bench, validator)
    if problems:
        return problems  # the rules below assume the schema's shape
    problems += null_reason_problems(bench)
    problems += round_problems(bench)
    return problems


def self_test(bench, validator):
    """Each mutation must be rejected; returns the names of those that were not."""
    def drop_reason(b):
        b["workload"] = None
        b.pop("workload_reason", None)

    def unknown_field(b):
        b["gpus"][0]["statistics"][0]["median"] = 1.0

    def wrong_mean(b):
        s = b["gpus"][0]["statistics"][0]
        s["mean"] = (s["mean"] or 0) + 1.0

    def kept_twice(b):
        g = b["gpus"][0]
        g["left_out"].append({"round": g["kept_rounds"][0], "reason": "duplicated"})

    def left_out_without_reason(b):
        b["rounds"][0]["gpus"][0]["kept"] = False
        b["rounds"][0]["gpus"][0].pop("left_out_because", None)

    def normal_instead_of_t(b):
        for s in b["gpus"][0]["statistics"]:
            if s["t"] is not None:
                s["t"] = 1.959964
                s["ci95_half_width"] = s["t"] * s["sd"] / math.sqrt(s["n"])
                s["ci95_low"] = s["mean"] - s["ci95_half_width"]
                s["ci95_high"] = s["mean"] + s["ci95_half_width"]

    def enough_flag_flipped(b):
        b["gpus"][0]["enough_rounds"] = not b["gpus"][0]["enough_rounds"]

    def nan_as_zero(b):
        b["rounds"][0]["gpus"][0]["figures"]["gpu_util_pct"] = None

    return accepted_breakages(bench, named(drop_reason, unknown_field, wrong_mean, kept_twice, left_out_without_reason,
                                           normal_instead_of_t, enough_flag_flipped, nan_as_zero),
                              lambda broken: problems_of(broken, validator))


def breakable(bench):
    if not bench["gpus"] or not bench["rounds"] or not bench["rounds"][0]["gpus"]:
        return False
    first = bench["rounds"][0]["gpus"][0]
    return (first["kept"] and first["figures"].get("gpu_util_pct") is not None
            and any(s["t"] is not None for s in bench["gpus"][0]["statistics"]))


def main():
    args = parse_args()
    validator = load_validator(args.schema)

    files = sorted(p for p in pathlib.Path(args.folder).rglob("bench.json") if p.is_file())
    if not files:
        print(f"validate_bench: no bench.json under {args.folder}; the tests that write them did not run")
        return 1
    # The self-test needs a file with a kept first round and a spread to break.
    bad, sample = check_files("validate_bench", "bench.json files", files, lambda b: problems_of(b, validator),
                              usable=breakable)
    failed = self_test_status("validate_bench", sample, lambda b: self_test(b, validator)) if args.self_test else 0
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
