#!/usr/bin/env bash
# The only symbols libnnrt exports are nnrt_* (the shared library's dynamic symbols, and the global
# symbols the static archive defines, apart from weak C++ template copies that the linker merges).
set -euo pipefail
shared="$1"
static="$2"
bad=$(nm -D --defined-only "$shared" | awk '{print $3}' | grep -v '^nnrt_' || true)
if [ -n "$bad" ]; then
  echo "libnnrt.so exports symbols outside nnrt_*:" >&2
  echo "$bad" | head -20 >&2
  exit 1
fi
count=$(nm -D --defined-only "$shared" | grep -c ' nnrt_')
echo "libnnrt.so exports $count symbols, all nnrt_*"
bad=$(nm --defined-only "$static" | awk 'NF == 3 && $2 ~ /^[TDBR]$/ {print $3}' | grep -v '^nnrt_' || true)
if [ -n "$bad" ]; then
  echo "libnnrt.a defines global symbols outside nnrt_*:" >&2
  echo "$bad" | head -20 >&2
  exit 1
fi
echo "libnnrt.a defines no global symbols outside nnrt_*"
