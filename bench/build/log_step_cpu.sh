#!/usr/bin/env bash
# Compile and link launcher for bench/build/ci_compile_cost.sh: runs the step and appends one line to
# $DIESCOPE_STEP_LOG: user and system CPU seconds, wall seconds, the kind (compile or link), the output.
kind=$1
shift
out=unknown
prev=
for arg in "$@"; do
  [ "$prev" = "-o" ] && out=$arg
  prev=$arg
done
exec /usr/bin/time -a -o "${DIESCOPE_STEP_LOG:?set by ci_compile_cost.sh}" -f "%U %S %e $kind $out" "$@"
