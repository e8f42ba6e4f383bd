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
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "check-format: ${#bad[@]} file(s) are not formatted as .clang-format says:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "  fix: scripts/check-format.sh --fix (or clang-format -i FILE), then commit" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
