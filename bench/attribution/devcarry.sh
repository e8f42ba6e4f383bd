#!/usr/bin/env bash
# Copies what the attribution run needs to a GPU machine without gRPC into one folder: stripped
# diescope, diescope-cupti, diescope-workload, libdiescope-kubelet.so and diescope-test-kubelet, and
# every shared library the last two load that is not glibc's or the C++ runtime's (gRPC, protobuf,
# abseil, c-ares, re2, upb, ...). Both carry an RPATH of $ORIGIN, so the copies beside them are found
# (docs/attribution.md#kubernetes). Prints the number of files and their size.
#
#   bench/attribution/devcarry.sh BUILD_BIN DEST
set -euo pipefail
src=${1:?usage: devcarry.sh BUILD_BIN DEST}
dest=${2:?usage: devcarry.sh BUILD_BIN DEST}
mkdir -p "$dest"
for f in diescope diescope-cupti diescope-workload libdiescope-kubelet.so diescope-test-kubelet; do
  [ -e "$src/$f" ] || { echo "devcarry.sh: missing $src/$f (build it first)" >&2; exit 2; }
  cp "$src/$f" "$dest/$f"
  strip --strip-unneeded "$dest/$f" 2> /dev/null || true
done
libs=0
while read -r path; do
  case "$(basename "$path")" in
    libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux* | libpthread.so* | libdl.so* | librt.so*) continue ;;
  esac
  cp -L "$path" "$dest/"
  strip --strip-unneeded "$dest/$(basename "$path")" 2> /dev/null || true
  libs=$((libs + 1))
done < <(ldd "$src/libdiescope-kubelet.so" "$src/diescope-test-kubelet" | awk '/=> \//{print $3}' | sort -u)
echo "devcarry: 5 programs and $libs libraries, $(du -sh "$dest" | cut -f1) in $dest"
