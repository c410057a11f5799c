package nnrt

// LinkTags lets the tests rebuild the package the way it was built (see missing_library_test.go).
const LinkTags = linkTags
