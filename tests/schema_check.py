"""What the JSON validators under tests/ share: the command line, loading a schema, reading a file
that must not hold NaN or Infinity, the null-with-reason rule, and the self-test that breaks a valid
file and expects each broken copy to be rejected.

The validators import it by adding tests/ to sys.path, so CTest runs them as plain scripts.
"""
import argparse
import copy
import json
import pathlib

import jsonschema


def parse_args():
    """SCHEMA FOLDER [--self-test], the arguments every validator takes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("schema")
    parser.add_argument("folder")
    parser.add_argument("--self-test", action="store_true")
    return parser.parse_args()


def load_validator(schema_path):
    """A Draft 2020-12 validator; fails first if the schema itself is not a valid schema."""
    schema = json.loads(pathlib.Path(schema_path).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _reject_constant(name):
    raise ValueError(name)


def read_json_strict(path):
    """Python's parser accepts NaN and Infinity; the files we write must not contain them."""
    return json.loads(pathlib.Path(path).read_text(), parse_constant=_reject_constant)


def sorted_schema_problems(doc, validator):
    """Schema errors, ordered by where they are, each as 'schema: <path>: <message>'."""
    return [f"schema: {'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def null_reason_problems(node, where="$"):
    """A null figure needs '<name>_reason' (or 'reason') beside it, a non-empty string."""
    problems = []
    if isinstance(node, dict):
        for key, value in node.items():
            if value is None and not key.endswith("_reason"):
                reason = node.get(key + "_reason", node.get("reason"))
                if not isinstance(reason, str) or not reason:
                    problems.append(f"{where}.{key} is null with no '{key}_reason' or 'reason' beside it")
            problems += null_reason_problems(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            problems += null_reason_problems(value, f"{where}[{i}]")
    return problems


def accepted_breakages(good, breakages, problems_of):
    """Applies each breakage to its own copy of a valid document; returns the names of those
    problems_of found nothing wrong with (each one is a check that does not work)."""
    accepted = []
    for name, breakage in breakages.items():
        broken = copy.deepcopy(good)
        breakage(broken)
        if not problems_of(broken):
            accepted.append(name)
    return accepted


def named(*breakages):
    """{function name: function}, for breakages written as named functions."""
    return {b.__name__: b for b in breakages}


def check_files(tool, noun, files, problems_of, usable=lambda doc: True):
    """Reads each file strictly and prints 'FAIL <path>' with its first 20 problems. Returns how many
    failed, and the first valid document `usable` accepts (the one the self-test breaks)."""
    bad, sample = 0, None
    for path in files:
        try:
            doc = read_json_strict(path)
        except ValueError as e:
            print(f"FAIL {path}: not valid JSON: {e}")
            bad += 1
            continue
        problems = problems_of(doc)
        if problems:
            bad += 1
            print(f"FAIL {path}")
            for p in problems[:20]:
                print(f"  {p}")
        elif sample is None and usable(doc):
            sample = doc
    print(f"{tool}: {len(files) - bad} of {len(files)} {noun} valid")
    return bad, sample


def self_test_status(tool, sample, self_test):
    """Runs `self_test(sample)` (which returns the names of the broken copies that were accepted)
    and prints the outcome; 1 when there was nothing to break or a broken copy passed, else 0."""
    if sample is None:
        print(f"{tool}: self-test: no valid file to break")
        return 1
    accepted = self_test(sample)
    if accepted:
        print(f"{tool}: self-test: these broken copies were accepted: {', '.join(accepted)}")
        return 1
    print(f"{tool}: self-test: every broken copy was rejected")
    return 0
