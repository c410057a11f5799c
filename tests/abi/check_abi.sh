#!/usr/bin/env bash
# Compares the ABI of the built libnnrt.so with the committed baseline abi/libnnrt.abi.
# Any difference but added functions fails (abidiff: 4 = changed, 8/12 = incompatible or removed).
# After a deliberate, compatible growth of the API, update the baseline with scripts/update-abi.
set -euo pipefail
lib="$1"
source_root="$2"
baseline="$source_root/abi/libnnrt.abi"
if [ ! -f "$baseline" ]; then
  echo "no ABI baseline at $baseline; create it with scripts/update-abi" >&2
  exit 1
fi
current=$(mktemp)
trap 'rm -f "$current"' EXIT
abidw --headers-dir "$source_root/include/nnrt" --drop-private-types --exported-interfaces-only \
  --no-corpus-path --no-comp-dir-path --short-locs "$lib" > "$current"
set +e
abidiff --no-added-syms --headers-dir1 "$source_root/include/nnrt" --headers-dir2 "$source_root/include/nnrt" \
  "$baseline" "$current"
status=$?
set -e
if [ $status -ne 0 ]; then
  echo "ABI check failed (abidiff exit $status): the library's ABI differs from abi/libnnrt.abi" >&2
  exit 1
fi
echo "ABI matches abi/libnnrt.abi"

# DESIGN: libnnrt depends on nothing beyond the C++ runtime, zlib and libdl (and libc's parts);
# anything heavy (oneDNN, CUDA, MPI, protobuf) belongs to a plugin.
allowed='^(libz\.so\.1|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2)$'
extra=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev "$allowed" || true)
if [ -n "$extra" ]; then
  echo "libnnrt.so needs libraries beyond the C++ runtime, zlib and libdl: $extra" >&2
  exit 1
fi
echo "libnnrt.so needs only: $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
