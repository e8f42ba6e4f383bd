#!/usr/bin/env bash
# Prints the folder whose compile_commands.json clang-tidy should read for BUILD_DIR: BUILD_DIR itself,
# or, where BUILD_DIR compiles some targets as one file (DIESCOPE_UNITY_BUILD,
# docs/building.md#compile-time) or with a precompiled header (DIESCOPE_TEST_PCH),
# BUILD_DIR/tidy-database, written here, in which each unity file's entry is replaced by one entry per
# source it includes, with the same command, and each command is without the precompiled header
# (`-Winvalid-pch -include .../cmake_pch.hxx`: clang cannot read GCC's, and the -O2 compile of
# scripts/check-tidy-changed.sh may not use one built at -O1). clang-tidy checks a source with the
# flags its target compiles it with, as in a build without unity or the precompiled header.
#   scripts/tidy-database.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: scripts/tidy-database.sh BUILD_DIR}
python3 - "$build" <<'PY'
import json, os, re, sys
build = sys.argv[1]
entries = json.load(open(os.path.join(build, "compile_commands.json")))
out, expanded = [], False
pch = re.compile(r" -Winvalid-pch -include \S*/cmake_pch\.hxx(?= )")
for entry in entries:
    if "command" in entry and pch.search(entry["command"]):
        entry = dict(entry, command=pch.sub("", entry["command"]))
        expanded = True
    elif "arguments" in entry and "-Winvalid-pch" in entry["arguments"]:
        args, kept = entry["arguments"], []
        i = 0
        while i < len(args):
            if args[i] == "-Winvalid-pch":
                i += 1
            elif args[i] == "-include" and i + 1 < len(args) and args[i + 1].endswith("/cmake_pch.hxx"):
                i += 2
            else:
                kept.append(args[i])
                i += 1
        entry = dict(entry, arguments=kept)
        expanded = True
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
