#!/usr/bin/env bash
# Google Benchmark's compare.py reads two JSON files written by a diescope::harness executable and
# compares them. Usage: compare_py_test.sh EXAMPLE COMPARE_PY PYTHON OUT_DIR
set -euo pipefail
example=$1 compare=$2 python=$3 out=$4

if [ ! -f "$compare" ]; then
  echo "compare.py not found (looked for Debian's libbenchmark-tools)"
  echo "  fix: bash scripts/setup.sh (installs libbenchmark-tools), then re-run cmake"
  exit 1
fi
if ! "$python" -c "import scipy, numpy" 2>/dev/null; then
  echo "$python cannot import scipy and numpy, which compare.py needs"
  echo "  fix: bash scripts/setup.sh (installs python3-scipy and python3-numpy)"
  exit 1
fi

mkdir -p "$out"
args=(--filter 'elements:4096$' --min-samples 5 --min-time 0.01 --timeout 1 --max-noise 50)
"$example" "${args[@]}" --json "$out/A.json" > "$out/A.txt"
"$example" "${args[@]}" --json "$out/B.json" > "$out/B.txt"
"$python" "$compare" --no-color benchmarks "$out/A.json" "$out/B.json" | tee "$out/compare.txt"

# compare.py exited 0 (set -e); now check it compared what we wrote.
for expected in "Comparing $out/A.json to $out/B.json" "triad/elements:4096 " "triad/elements:4096_mean " \
                "triad/elements:4096_pvalue" "OVERALL_GEOMEAN"; do
  if ! grep -qF -- "$expected" "$out/compare.txt"; then
    echo "compare.py output lacks: $expected"
    exit 1
  fi
done
echo "compare.py read both files and compared them"
