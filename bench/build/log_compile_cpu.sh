#!/usr/bin/env bash
# Compiler launcher for bench/build/compile_cpu_time.sh and cli11_one_tu.sh: log_step_cpu.sh's line
# ("user system wall compile OBJECT") appended to $DIESCOPE_COMPILE_LOG.
DIESCOPE_STEP_LOG=${DIESCOPE_COMPILE_LOG:?set by compile_cpu_time.sh} exec "$(dirname "$0")/log_step_cpu.sh" compile "$@"
