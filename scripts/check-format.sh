#!/usr/bin/env bash
# Fails when a C++ or CUDA file tracked by git differs from what clang-format (14, the project's
# .clang-format) makes of it. Fix: scripts/check-format.sh --fix, or clang-format -i FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# Files in batches, one clang-format per batch and core (one process per file took 39 s in CI).
status=0
out=$(printf '%s\0' "${files[@]}" | xargs -0 -n 64 -P "$(nproc)" clang-format --dry-run --Werror 2>&1 >/dev/null) || status=$?
mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: (error|warning): code should be clang-formatted' <<<"$out" | cut -d: -f1 | sort -u)
if ((status)) && ((${#bad[@]} == 0)); then
  echo "$out" >&2
  echo "check-format: clang-format failed (above); fix: install clang-format 14 (scripts/setup.sh)" >&2
  exit 1
fi
if ((${#bad[@]})); then
  echo "check-format: ${#bad[@]} file(s) are not formatted as .clang-format says:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "  fix: scripts/check-format.sh --fix (or clang-format -i FILE), then commit" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
