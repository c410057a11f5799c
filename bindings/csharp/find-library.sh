# Sourced by ./build and ./test: finds libnnrt the way every nnrt binding does.
#
#   1. NNRT_LIB_DIR, a folder holding libnnrt.so, if set;
#   2. else pkg-config's nnrt (its -L folders and libdir; PKG_CONFIG_PATH picks up an uninstalled
#      build's nnrt-uninstalled.pc);
#   3. else the meson build folder of this checkout, ../../build.
#
# The first place that applies is the answer: a wrong NNRT_LIB_DIR is an error, not a reason to
# look elsewhere and silently test another library.

# Prints the absolute path of the library file (libnnrt.so.1, the soname, else libnnrt.so), or
# prints why not to stderr and returns 1.
nnrt_find_library() {
  local binding_dir=$1 source dirs=() dir
  if [ -n "${NNRT_LIB_DIR:-}" ]; then
    source="NNRT_LIB_DIR=$NNRT_LIB_DIR"
    dirs=("$NNRT_LIB_DIR")
  elif command -v pkg-config >/dev/null 2>&1 && pkg-config --exists nnrt 2>/dev/null; then
    source="pkg-config nnrt ($(pkg-config --path nnrt 2>/dev/null || echo nnrt.pc))"
    for dir in $(pkg-config --libs-only-L nnrt); do dirs+=("${dir#-L}"); done
    dirs+=("$(pkg-config --variable=libdir nnrt)")
  else
    source="the checkout's build folder"
    dirs=("$binding_dir/../../build")
  fi
  for dir in "${dirs[@]}"; do
    for name in libnnrt.so.1 libnnrt.so; do
      if [ -f "$dir/$name" ]; then
        echo "$(cd "$dir" && pwd -P)/$name"
        return 0
      fi
    done
  done
  echo "error: libnnrt not found: looked in ${dirs[*]} (from $source)." >&2
  echo "Build the C library first (meson setup build && ninja -C build), or set NNRT_LIB_DIR to the" >&2
  echo "folder holding libnnrt.so, or PKG_CONFIG_PATH to one holding nnrt.pc." >&2
  return 1
}
