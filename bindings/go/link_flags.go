//go:build nnrt_no_pkgconfig

package nnrt

// With the build tag nnrt_no_pkgconfig the library is found through the compiler flags alone:
// CGO_LDFLAGS="-L<dir>" for the folder holding libnnrt.so (plus an rpath: -Wl,-rpath,<dir> there,
// or go's -ldflags=-r=<dir>), and CGO_CFLAGS="-I<dir>" for the header's folder when it is not the
// checkout's include folder. This is how nnrt_env.sh uses NNRT_LIB_DIR, a folder that need not
// have a pkg-config file.

// #cgo LDFLAGS: -lnnrt
// #cgo CFLAGS: -I${SRCDIR}/../../include
import "C"

// linkTags are the build tags that select this way of finding the library.
const linkTags = "nnrt_no_pkgconfig"
