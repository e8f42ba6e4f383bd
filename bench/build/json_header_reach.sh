#!/usr/bin/env bash
# Whether nlohmann/json_fwd.hpp in the public headers would save compile time: for the .cpp files of
# src/, tests/, bench/ and examples/, how many reach nlohmann/json.hpp (through any include of the
# project) and how many of those never name nlohmann themselves (the ones the forward header could
# spare the full header), and the CPU seconds of a file that includes only json.hpp, only
# json_fwd.hpp and only three standard headers, at -O2.
#   bench/build/json_header_reach.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v /usr/bin/time >/dev/null || { echo "json_header_reach: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
python3 - <<'PY'
import glob, os, re
inc = re.compile(r'#include [<"]([^>"]+)[>"]')
def resolve(name, cur):
    for base in ["include", os.path.dirname(cur), "tests"]:
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return p
    return None
def reach(f, seen):
    out = set()
    for m in inc.findall(open(f, errors="replace").read()):
        if m.startswith("nlohmann/"):
            out.add(m)
            continue
        p = resolve(m, f)
        if p and p not in seen:
            seen.add(p)
            out |= reach(p, seen)
    return out
print("| files | .cpp | reach json.hpp | of those, never name nlohmann |")
print("| --- | ---: | ---: | ---: |")
for pattern in ["src/**/*.cpp", "tests/**/*.cpp", "bench/**/*.cpp", "examples/*.cpp"]:
    files = sorted(glob.glob(pattern, recursive=True))
    hit = [f for f in files if "nlohmann/json.hpp" in reach(f, {f})]
    spare = [f for f in hit if "nlohmann" not in open(f, errors="replace").read()]
    print(f"| `{pattern}` | {len(files)} | {len(hit)} | {len(spare)} {' '.join('`' + s + '`' for s in spare)} |")
PY
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <nlohmann/json.hpp>\nint main() {}\n' >"$probe/full.cpp"
printf '#include <nlohmann/json_fwd.hpp>\nint main() {}\n' >"$probe/fwd.cpp"
printf '#include <map>\n#include <string>\n#include <vector>\nint main() {}\n' >"$probe/std.cpp"
for f in full fwd std; do
  /usr/bin/time -f "json_header_reach: a file including only $f: %U+%S CPU-s" g++ -std=c++20 -O2 -c "$probe/$f.cpp" -o "$probe/$f.o"
done 2>&1
