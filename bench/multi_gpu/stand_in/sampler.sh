#!/bin/sh
# DIESCOPE_CUPTI stand-in: the fake sampler child ($DIESCOPE_TEST_FAKE_SAMPLER), GPU 0's units held
# at 60% and GPU 1's at 20%. diescope-cupti is started as `diescope-cupti sample ARGS`; the fake
# takes ARGS alone.
[ "$1" = sample ] && shift
exec "$DIESCOPE_TEST_FAKE_SAMPLER" "$@" --fake-level 0:60 --fake-level 1:20
