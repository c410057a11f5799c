module nnrt.dev/nnrt

go 1.19
