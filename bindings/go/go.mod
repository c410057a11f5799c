module nnrt

go 1.19
