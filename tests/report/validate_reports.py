#!/usr/bin/env python3
"""Validates every report.json the test suite wrote against docs/report.schema.json.

Beyond the schema it checks the rules a schema cannot say:
  - a null figure has '<name>_reason' (or 'reason') beside it, a non-empty string;
  - headline figures have one decimal, and stranded = idle + active when all three are present;
  - a partial result's wording names its coverage.
Fails when the folder holds no report. With --self-test it also breaks a valid report in several
ways and fails unless each broken copy is rejected, so the checks themselves are tested.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from schema_check import (accepted_breakages, check_files, load_validator, named,  # noqa: E402
                          null_reason_problems, parse_args, self_test_status, sorted_schema_problems)


def is_tenths(x):
    return abs(x * 10 - round(x * 10)) < 1e-9


def headline_problems(results, where):
    problems = []
    h = results["headline"]
    for key in ("gpu_util_pct", "die_util_pct", "gap_points", "stranded_points", "idle_points", "active_points"):
        if isinstance(h.get(key), (int, float)) and not is_tenths(h[key]):
            problems.append(f"{where}.headline.{key} = {h[key]} is not in whole tenths")
    parts = [h.get(k) for k in ("stranded_points", "idle_points", "active_points")]
    if all(isinstance(p, (int, float)) for p in parts):
        if round(parts[0] * 10) != round(parts[1] * 10) + round(parts[2] * 10):
            problems.append(f"{where}.headline: stranded {parts[0]} != idle {parts[1]} + active {parts[2]}")
    gate = results["chip_coverage_gate"]
    if gate["partial"] and "covered" in gate["wording"] and "%" not in gate["wording"]:
        problems.append(f"{where}.chip_coverage_gate.wording names no share: {gate['wording']!r}")
    return problems


def problems_of(report, validator):
    problems = sorted_schema_problems(report, validator)
    if problems:
        return problems  # the rules below assume the schema's shape
    problems += null_reason_problems(report)
    problems += headline_problems(report["results"], "$.results")
    if report["window"]["found"]:
        problems += headline_problems(report["window"]["results"], "$.window.results")
    return problems


def self_test(report, validator):
    """Each mutation must be rejected; returns the names of those that were not."""
    def drop_reason(r):
        r["results"]["die_util_pct"] = None
        r["results"].pop("die_util_pct_reason", None)

    def nan_as_zero_with_unknown_field(r):
        r["results"]["die_util_pct_missing"] = 0

    def bad_parts(r):
        h = r["results"]["headline"]
        h["stranded_points"], h["idle_points"], h["active_points"] = 20.0, 10.0, 9.9

    def two_decimals(r):
        r["results"]["headline"]["gap_points"] = 12.34

    def wrong_schema(r):
        r["schema"] = 2

    def partial_without_wording(r):
        r["results"]["chip_coverage_gate"].update(partial=True, passed=False)
        r["results"]["chip_coverage_gate"].pop("wording", None)

    def calibration_status(r):
        r["calibration"]["status"] = "maybe"

    def cost_without_reason(r):
        r["cost"].pop("reason")

    return accepted_breakages(report, named(drop_reason, nan_as_zero_with_unknown_field, bad_parts, two_decimals,
                                            wrong_schema, partial_without_wording, calibration_status,
                                            cost_without_reason),
                              lambda broken: problems_of(broken, validator))


def main():
    args = parse_args()
    validator = load_validator(args.schema)

    files = sorted(p for p in pathlib.Path(args.folder).rglob("*.json") if p.is_file())
    if not files:
        print(f"validate_reports: no report found under {args.folder}; the tests that write reports did not run")
        return 1
    bad, sample = check_files("validate_reports", "reports", files, lambda r: problems_of(r, validator))
    failed = self_test_status("validate_reports", sample, lambda r: self_test(r, validator)) if args.self_test else 0
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
