#!/bin/sh
# A stand-in for ncu, for roofline_cli_test: `--import R.ncu-rep --csv ...` prints the export named
# in R.ncu-rep (one line: a fixture path); a profiling run runs its target (after `setarch M -R`),
# then writes R.ncu-rep naming $FAKE_NCU_EXPORT, or fails as the target did.
if [ "$1" = "--import" ]; then
  cat "$(cat "$2")"
  exit 0
fi
export_base=""
while [ $# -gt 0 ]; do
  case "$1" in
    --export) export_base=$2; shift 2 ;;
    setarch) shift 3; break ;;
    *) shift ;;
  esac
done
echo "==PROF== Connected to process $$"
"$@"
rc=$?
if [ $rc -ne 0 ]; then
  echo "==ERROR== The application returned an error code ($rc)."
  exit $rc
fi
echo "$FAKE_NCU_EXPORT" > "$export_base.ncu-rep"
echo "==PROF== Report: $export_base.ncu-rep"
