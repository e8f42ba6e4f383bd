#!/bin/sh
# diescope starts its sampler as `diescope-cupti sample ARGS`; the fake sampler child takes ARGS
# alone. The command-line test names this script in DIESCOPE_CUPTI and the fake child in
# DIESCOPE_TEST_FAKE_SAMPLER.
[ "$1" = sample ] && shift
exec "$DIESCOPE_TEST_FAKE_SAMPLER" "$@"
