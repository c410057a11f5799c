package nnrt

import (
	"runtime"
	"unsafe"
)

// Array is a typed n-dimensional array on a context's device. Arrays are never changed after they
// are made (ops make new ones), so an Array may be read by many goroutines at once. It keeps its
// context alive.
type Array struct {
	h     cHandle
	dtype DType
	shape []int64
}

// wrapArray takes ownership of an array nnrt returned, reading its dtype and shape once.
func wrapArray(p unsafe.Pointer) (*Array, error) {
	dtype, shape, err := cArrayInfo(p)
	if err != nil {
		cArrayRelease(p)
		return nil, err
	}
	a := &Array{h: newCHandle("array", p, cArrayRelease), dtype: dtype, shape: shape}
	runtime.SetFinalizer(a, (*Array).Close)
	return a, nil
}

func (a *Array) handle() *cHandle {
	if a == nil {
		return nil
	}
	return &a.h
}

// NewArray creates a zero-filled array; no shape makes a scalar, and a 0 dimension an empty array.
func (c *Context) NewArray(dtype DType, shape ...int64) (*Array, error) {
	cp, err := c.borrow()
	if err != nil {
		return nil, err
	}
	defer c.h.giveBack()
	p, err := cArrayCreate(cp, dtype, shape)
	if err != nil {
		return nil, err
	}
	return wrapArray(p)
}

// NewArrayFromBytes creates an array and copies row-major element data into it. len(data) must
// be the element count times dtype.Size(); nnrt keeps no reference to data.
func (c *Context) NewArrayFromBytes(dtype DType, shape []int64, data []byte) (*Array, error) {
	return c.arrayFromHost(dtype, shape, slicePtr(data), len(data))
}

// NewArrayFrom creates an array of T's dtype from a Go slice holding its elements row-major, e.g.
// NewArrayFrom(ctx, []float32{1, 2, 3, 4}, 2, 2). No shape makes a scalar from one element.
func NewArrayFrom[T Element](c *Context, data []T, shape ...int64) (*Array, error) {
	return c.arrayFromHost(DTypeOf[T](), shape, slicePtr(data), byteLen(data))
}

func (c *Context) arrayFromHost(dtype DType, shape []int64, data unsafe.Pointer, nbytes int) (*Array, error) {
	cp, err := c.borrow()
	if err != nil {
		return nil, err
	}
	defer c.h.giveBack()
	p, err := cArrayFromHost(cp, dtype, shape, data, nbytes)
	if err != nil {
		return nil, err
	}
	return wrapArray(p)
}

// slicePtr points at a slice's first element, or is nil for an empty slice (C then gets NULL,
// which nnrt accepts with a byte count of 0).
func slicePtr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// byteLen is the size of a slice's elements in bytes.
func byteLen[T any](s []T) int {
	var zero T
	return len(s) * int(unsafe.Sizeof(zero))
}

// DType returns the element type.
func (a *Array) DType() DType { return a.dtype }

// Shape returns a copy of the shape; a scalar has none.
func (a *Array) Shape() []int64 { return append([]int64(nil), a.shape...) }

// Len returns the element count: the product of the shape.
func (a *Array) Len() int64 {
	n := int64(1)
	for _, d := range a.shape {
		n *= d
	}
	return n
}

// Info asks nnrt for the dtype and shape (DType and Shape return the same, read at creation).
func (a *Array) Info() (DType, []int64, error) {
	p, err := a.handle().borrow()
	if err != nil {
		return 0, nil, err
	}
	defer a.h.giveBack()
	return cArrayInfo(p)
}

// NBytes returns the size of the elements in bytes.
func (a *Array) NBytes() (int, error) {
	p, err := a.handle().borrow()
	if err != nil {
		return 0, err
	}
	defer a.h.giveBack()
	return cArrayNBytes(p)
}

// CopyToBytes copies the elements, row-major, into dst, whose length must be NBytes exactly.
func (a *Array) CopyToBytes(dst []byte) error {
	return a.toHost(slicePtr(dst), len(dst))
}

// Bytes returns a copy of the elements' bytes, row-major.
func (a *Array) Bytes() ([]byte, error) {
	n, err := a.NBytes()
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	if err := a.CopyToBytes(out); err != nil {
		return nil, err
	}
	return out, nil
}

// CopyTo copies the elements of a, row-major, into dst. T must match the array's dtype and dst
// must have exactly a.Len() elements.
func CopyTo[T Element](a *Array, dst []T) error {
	if a == nil {
		return bindingError(ErrInvalidArgument, "nil array")
	}
	if want := DTypeOf[T](); a.dtype != want {
		return bindingError(ErrDType, "the array holds %v elements, the Go slice %v", a.dtype, want)
	}
	return a.toHost(slicePtr(dst), byteLen(dst))
}

// ToSlice returns the elements of a, row-major, in a new slice. T must match the array's dtype.
func ToSlice[T Element](a *Array) ([]T, error) {
	if a == nil {
		return nil, bindingError(ErrInvalidArgument, "nil array")
	}
	out := make([]T, a.Len())
	if err := CopyTo(a, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *Array) toHost(data unsafe.Pointer, nbytes int) error {
	p, err := a.handle().borrow()
	if err != nil {
		return err
	}
	defer a.h.giveBack()
	return cArrayToHost(p, data, nbytes)
}

// Close releases the caller's reference. Memory returns to the context's cache once nothing else
// uses it; calling Close again does nothing.
func (a *Array) Close() {
	if a == nil {
		return
	}
	runtime.SetFinalizer(a, nil)
	a.h.close()
}
