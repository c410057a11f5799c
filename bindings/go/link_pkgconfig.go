//go:build !nnrt_no_pkgconfig

package nnrt

// By default the library is found with pkg-config: nnrt.pc when nnrt is installed, or the build
// tree's nnrt-uninstalled.pc when <build>/meson-uninstalled is on PKG_CONFIG_PATH. The checkout's
// own include folder comes after pkg-config's flags, so an installed header wins and a build tree
// (whose uninstalled .pc file names no include folder) still compiles.

// #cgo pkg-config: nnrt
// #cgo CFLAGS: -I${SRCDIR}/../../include
import "C"

// linkTags are the build tags that select this way of finding the library.
const linkTags = ""
