#!/usr/bin/env bash
# scripts/check-tidy-changed.sh on throwaway git repositories, with a stand-in clang-tidy that logs
# the files it is given and finds a problem in any file holding the word BAD: which files a
# submission's change selects (a changed .cpp, a changed header through the .cpp that includes it),
# which base each rule picks (given, merge base with origin/main, HEAD~1, every file in a one-commit
# clone), and that a finding fails.
#
#   check_tidy_changed_test.sh REPO_ROOT
set -euo pipefail
root=$(cd "$1" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
mkdir -p "$scratch/bin"
cat > "$scratch/bin/clang-tidy" <<'SH'
#!/bin/sh
# clang-tidy -p BUILD --quiet FILE
echo "$4" >> "$TIDY_LOG"
if grep -q BAD "$4"; then echo "$4:1:1: warning: BAD found [stand-in]"; exit 1; fi
SH
chmod +x "$scratch/bin/clang-tidy"
export PATH="$scratch/bin:$PATH"

make_repo() {  # make_repo NAME: two sources, a public header that b.cpp includes, one commit
  local dir="$scratch/$1"
  mkdir -p "$dir/scripts" "$dir/src/p" "$dir/include/diescope/p" "$dir/build"
  git -C "$dir" init -q --template= -b main
  git -C "$dir" config user.email t@t; git -C "$dir" config user.name t
  cp "$root/scripts/check-tidy-changed.sh" "$root/scripts/check-tidy.sh" "$root/scripts/tidy-database.sh" "$dir/scripts/"
  echo "int a;" > "$dir/src/p/a.cpp"
  printf '#include "diescope/p/y.hpp"\nint b;\n' > "$dir/src/p/b.cpp"
  echo "#pragma once" > "$dir/include/diescope/p/y.hpp"
  printf '[{"directory": "%s", "file": "src/p/a.cpp"}, {"directory": "%s", "file": "src/p/b.cpp"}]\n' "$dir" "$dir" > "$dir/build/compile_commands.json"
  git -C "$dir" add scripts src include
  git -C "$dir" commit -q -m first
  echo "$dir"
}
commit() { git -C "$1" add -A src include; git -C "$1" commit -q -m "$2"; }

# expect NAME WANT_RC WANT_FILES [ARGS...]: the exit code, and the files clang-tidy was given (sorted, space-separated).
expect() {
  local name=$1 want=$2 files=$3 rc=0 out got
  shift 3
  export TIDY_LOG="$scratch/$name.log"
  : > "$TIDY_LOG"
  out=$(cd "$scratch/$name" && bash scripts/check-tidy-changed.sh build "$@" 2>&1) || rc=$?
  got=$(sort "$TIDY_LOG" | sed "s#^$scratch/$name/##" | tr '\n' ' ' | sed 's/ $//')
  if [[ "$rc" != "$want" || "$got" != "$files" ]]; then
    echo "FAIL $name: exit $rc (expected $want), checked [$got] (expected [$files])"; echo "$out"; failed=1; return
  fi
  echo "ok   $name"
}

dir=$(make_repo source); echo "int a2;" >> "$dir/src/p/a.cpp"; commit "$dir" "change a"
expect source 0 "src/p/a.cpp"

dir=$(make_repo header); echo "// changed" >> "$dir/include/diescope/p/y.hpp"; commit "$dir" "change y"
expect header 0 "src/p/b.cpp"

dir=$(make_repo docs); echo "text" > "$dir/src/p/notes.txt"; commit "$dir" "no C++"
expect docs 0 ""

dir=$(make_repo given); echo "int a2;" >> "$dir/src/p/a.cpp"; commit "$dir" "change a"
echo "int b2;" >> "$dir/src/p/b.cpp"; commit "$dir" "change b"
expect given 0 "src/p/a.cpp src/p/b.cpp" HEAD~2

# A branch not yet on origin/main: everything since the merge base, not only its last commit.
dir=$(make_repo branch); git -C "$dir" update-ref refs/remotes/origin/main HEAD
echo "int a2;" >> "$dir/src/p/a.cpp"; commit "$dir" "change a"
echo "int b2;" >> "$dir/src/p/b.cpp"; commit "$dir" "change b"
expect branch 0 "src/p/a.cpp src/p/b.cpp"

dir=$(make_repo onecommit)
expect onecommit 0 "src/p/a.cpp src/p/b.cpp"

dir=$(make_repo finding); echo "int BAD;" >> "$dir/src/p/a.cpp"; commit "$dir" "bad a"
expect finding 1 "src/p/a.cpp"

exit "$failed"
