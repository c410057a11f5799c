#!/usr/bin/env bash
# Installs into a scratch folder, then builds C programs against the installed header with nothing
# but pkg-config, linked shared and statically, and runs them.
set -euo pipefail
build_root="$1"
source_root="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
meson configure "$build_root" >/dev/null  # fails early if the build folder is not a meson build
DESTDIR="$work/stage" meson install -C "$build_root" --no-rebuild --quiet
# The build's prefix (e.g. /usr/local) now lies under the stage folder; point pkg-config there.
stage_prefix=$(find "$work/stage" -name nnrt.pc -path '*/pkgconfig/*' | head -1 | xargs dirname)
export PKG_CONFIG_PATH="$stage_prefix"
export PKG_CONFIG_SYSROOT_DIR="$work/stage"
pkg-config --exists nnrt
libdir=$(pkg-config --variable=libdir nnrt)
test -f "$libdir/libnnrt.so.1"
test -f "$libdir/libnnrt.a"
test -f "$(pkg-config --variable=includedir nnrt)/nnrt/nnrt.h"
# The C++ wrapper is installed beside it and compiles on its own, warnings as errors.
echo '#include <nnrt/nnrt.hpp>' | c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -x c++ - \
  $(pkg-config --cflags nnrt)

# Shared: cc prog.c $(pkg-config --cflags --libs nnrt)
cc -std=c99 -Wall -Werror "$source_root/examples/array_math.c" $(pkg-config --cflags --libs nnrt) -o "$work/shared_app"
LD_LIBRARY_PATH="$libdir" "$work/shared_app" > "$work/shared.out"
grep -q "a x b" "$work/shared.out"
echo "shared link: ok ($(ldd "$work/shared_app" | grep -o 'libnnrt.so.1' | head -1))"

# Static: the archive, then what pkg-config --static says it needs.
cc -std=c99 -Wall -Werror "$source_root/examples/static_link.c" $(pkg-config --cflags nnrt) \
  -Wl,-Bstatic $(pkg-config --libs-only-l nnrt) -Wl,-Bdynamic $(pkg-config --static --libs-only-l nnrt | sed 's/-lnnrt\b//') \
  -L"$libdir" -o "$work/static_app"
if ldd "$work/static_app" | grep -q libnnrt; then
  echo "the static program still needs libnnrt.so" >&2
  exit 1
fi
"$work/static_app"
echo "static link: ok"

# The exact-result and bad-input checks of the C tests (matmul, broadcasting, reductions, softmax,
# f16/bf16 casts, every documented status), built against the installed header only, linked both
# ways. The static programs load the installed oneDNN plugin from the install libdir through
# NNRT_BACKEND_PATH, as an installed program would find it in the default libdir.
plugin_dir="$libdir/nnrt/backends"
for test in test_ops test_array; do
  cc -std=c99 -pedantic -Werror -D_POSIX_C_SOURCE=200809L -I"$source_root/tests/c" \
    "$source_root/tests/c/$test.c" $(pkg-config --cflags --libs nnrt) -lm -o "$work/${test}_shared"
  LD_LIBRARY_PATH="$libdir" NNRT_BACKEND_PATH="$plugin_dir" "$work/${test}_shared"
  cc -std=c99 -pedantic -Werror -D_POSIX_C_SOURCE=200809L -I"$source_root/tests/c" \
    "$source_root/tests/c/$test.c" $(pkg-config --cflags nnrt) \
    -Wl,-Bstatic $(pkg-config --libs-only-l nnrt) -Wl,-Bdynamic \
    $(pkg-config --static --libs-only-l nnrt | sed 's/-lnnrt\b//') -L"$libdir" -lm -o "$work/${test}_static"
  NNRT_BACKEND_PATH="$plugin_dir" "$work/${test}_static"
done
echo "installed-header tests, shared and static: ok"

# The cuDNN backend, where it was built: the plugin file links no CUDA library, and the backend it
# loads on a machine with a GPU is installed beside it.
if [ -f "$plugin_dir/libnnrt-backend-cudnn.so" ]; then
  test -f "$plugin_dir/libnnrt-cudnn.so"
  if ldd "$plugin_dir/libnnrt-backend-cudnn.so" | grep -E 'libcu(da|dart|blas|dnn)'; then
    echo "the installed cuDNN plugin file links CUDA libraries; it should load them only with a GPU" >&2
    exit 1
  fi
  echo "cuDNN plugin and backend installed: ok"
fi
