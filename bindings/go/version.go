package nnrt

// The version of the header this package was compiled against (capi_arrays.go checks these
// against nnrt.h at build time).
const (
	VersionMajor = 0
	VersionMinor = 1
	VersionPatch = 0
	// HeaderABIVersion is the ABI the binding was compiled for; LibraryABIVersion is the loaded
	// library's. They differ only when a mismatched libnnrt was found at run time.
	HeaderABIVersion = 1
	// MaxDims is the largest rank of an array.
	MaxDims = 8
)

// LibraryABIVersion returns the ABI version the loaded libnnrt was built with.
func LibraryABIVersion() uint32 { return cABIVersion() }

// Version returns the loaded library's version, "MAJOR.MINOR.PATCH".
func Version() string { return cVersionString() }

// CheckABI returns an ErrVersion error when the loaded library's ABI differs from the header's.
// NewContext calls it, so every other object is made by a library this binding can talk to.
func CheckABI() error {
	if got := LibraryABIVersion(); got != HeaderABIVersion {
		return bindingError(ErrVersion, "libnnrt has ABI version %d, this binding was built for %d",
			got, HeaderABIVersion)
	}
	return nil
}
