#!/usr/bin/env bash
# Compiler launcher for bench/build/compile_cpu_time.sh: runs the compile and appends one line to
# $DIESCOPE_COMPILE_LOG: user and system CPU seconds, wall seconds, the object file.
out=unknown
prev=
for arg in "$@"; do
  [ "$prev" = "-o" ] && out=$arg
  prev=$arg
done
exec /usr/bin/time -a -o "${DIESCOPE_COMPILE_LOG:?set by compile_cpu_time.sh}" -f "%U %S %e $out" "$@"
