#!/bin/sh
# Stand-in for ddp_train.py on a CPU machine: the window markers around --seconds S of sleep; every
# other argument (--world-size N) is ignored.
secs=5
while [ $# -gt 0 ]; do
  [ "$1" = --seconds ] && secs=$2
  shift
done
echo 'diescope: measure start'
sleep "$secs"
echo 'diescope: measure stop'
echo "ddp: stand-in, seconds $secs"
