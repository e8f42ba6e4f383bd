#!/usr/bin/env bash
# Prints the folder whose compile_commands.json clang-tidy should read for BUILD_DIR: BUILD_DIR itself,
# or, where BUILD_DIR compiles some targets as one file (DIESCOPE_UNITY_BUILD,
# docs/building.md#compile-time), BUILD_DIR/tidy-database, written here, in which each unity file's
# entry is replaced by one entry per source it includes, with the same command. clang-tidy checks a
# source with the flags its target compiles it with, as in a build without unity.
#   scripts/tidy-database.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: scripts/tidy-database.sh BUILD_DIR}
python3 - "$build" <<'PY'
import json, os, re, sys
build = sys.argv[1]
entries = json.load(open(os.path.join(build, "compile_commands.json")))
out, expanded = [], False
for entry in entries:
    unity = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if not re.search(r"/Unity/unity_[^/]*$", unity):
        out.append(entry)
        continue
    expanded = True
    for source in re.findall(r'^#include "([^"]+)"', open(unity).read(), flags=re.M):
        one = dict(entry, file=source)
        if "command" in one:
            one["command"] = one["command"].replace(entry["file"], source)
        else:
            one["arguments"] = [source if a == entry["file"] else a for a in one["arguments"]]
        out.append(one)
if not expanded:
    print(build)
    sys.exit(0)
folder = os.path.join(build, "tidy-database")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "compile_commands.json.new"), "w") as f:
    json.dump(out, f, indent=1)
os.replace(os.path.join(folder, "compile_commands.json.new"), os.path.join(folder, "compile_commands.json"))
print(folder)
PY
