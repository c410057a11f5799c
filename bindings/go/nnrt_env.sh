# Sourced by ./test and ./with-nnrt: finds libnnrt and sets up the go command to build against it,
# offline, with every output under .cache (gitignored). The order is the one all bindings use:
#   1. NNRT_LIB_DIR, a folder holding libnnrt.so (an install libdir or a meson build folder);
#   2. pkg-config: nnrt.pc, or a build folder's nnrt-uninstalled.pc, on PKG_CONFIG_PATH;
#   3. the checkout's meson build folder, ../../build.
# On success it exports the go environment and sets nnrt_found (what was used) and nnrt_lib_dirs;
# on failure it prints why and returns 1.

nnrt_go_env() {
  local here cache tags="" inc
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  cache="$here/.cache"
  mkdir -p "$cache/tmp" || return 1
  export GOCACHE="$cache/go-build" GOPATH="$cache/gopath" GOMODCACHE="$cache/gopath/pkg/mod"
  export GOTMPDIR="$cache/tmp" GOPROXY=off GO111MODULE=on CGO_ENABLED=1 GOENV=off

  if [ -n "${NNRT_LIB_DIR:-}" ]; then
    if [ ! -e "$NNRT_LIB_DIR/libnnrt.so" ]; then
      echo "NNRT_LIB_DIR=$NNRT_LIB_DIR holds no libnnrt.so" >&2
      return 1
    fi
    nnrt_lib_dirs=$(cd "$NNRT_LIB_DIR" && pwd)
    nnrt_found="NNRT_LIB_DIR=$nnrt_lib_dirs"
  elif command -v pkg-config >/dev/null && pkg-config --exists nnrt 2>/dev/null; then
    nnrt_lib_dirs=$(pkg-config --libs-only-L nnrt | sed 's/-L//g')
    nnrt_found="pkg-config: $(pkg-config --path nnrt 2>/dev/null || echo nnrt.pc)"
  elif [ -e "$here/../../build/libnnrt.so" ]; then
    nnrt_lib_dirs=$(cd "$here/../../build" && pwd)
    if command -v pkg-config >/dev/null && [ -f "$nnrt_lib_dirs/meson-uninstalled/nnrt-uninstalled.pc" ]; then
      export PKG_CONFIG_PATH="$nnrt_lib_dirs/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
      nnrt_found="the checkout's build folder, through its meson-uninstalled/nnrt-uninstalled.pc"
    else
      nnrt_found="the checkout's build folder $nnrt_lib_dirs"
    fi
  else
    echo "cannot find libnnrt: set NNRT_LIB_DIR to the folder holding libnnrt.so, put nnrt.pc on" \
      "PKG_CONFIG_PATH, or build the checkout first (meson setup build && ninja -C build)" >&2
    return 1
  fi
  if [ -z "$nnrt_lib_dirs" ]; then
    echo "pkg-config names no library folder for nnrt" >&2
    return 1
  fi

  # Without pkg-config's help, the build tag nnrt_no_pkgconfig links with -lnnrt and takes the
  # folders from CGO_LDFLAGS and CGO_CFLAGS (see link_flags.go).
  case "$nnrt_found" in
  pkg-config:* | *nnrt-uninstalled.pc) ;;
  *)
    tags=" -tags=nnrt_no_pkgconfig"
    export CGO_LDFLAGS="-L$nnrt_lib_dirs ${CGO_LDFLAGS:-}"
    # An installed tree's header (<prefix>/include beside <prefix>/lib[/<triplet>]); without one,
    # link_flags.go uses the checkout's include folder.
    for inc in "${NNRT_INCLUDE_DIR:-}" "$nnrt_lib_dirs/../include" "$nnrt_lib_dirs/../../include"; do
      if [ -n "$inc" ] && [ -f "$inc/nnrt/nnrt.h" ]; then
        export CGO_CFLAGS="-I$(cd "$inc" && pwd) ${CGO_CFLAGS:-}"
        break
      fi
    done
    ;;
  esac
  # The run-time search path (rpath) goes in at link time (-ldflags=-r), not into CGO_LDFLAGS, so
  # that the missing-library test can relink the suite without it and without recompiling.
  export GOFLAGS="-mod=mod$tags -ldflags=-r=$(echo $nnrt_lib_dirs | tr ' ' ':')"
}
