package nnrt

import (
	"sync"
	"unsafe"
)

// cHandle owns one C object for a Go wrapper. Calls borrow the pointer for their duration; Close
// marks the handle closed and the C object is released when the last borrower gives it back. So
// Close never waits, never races with a call running on another goroutine, and a closed object
// fails with ErrInvalidArgument instead of touching freed memory.
//
// The release function must not refer to the Go wrapper that holds the handle: that would make a
// cycle through an object with a finalizer, which the garbage collector never finalizes.
type cHandle struct {
	mu      sync.Mutex
	ptr     unsafe.Pointer
	users   int
	closed  bool
	kind    string // "array", "model", ...: named in the error for a closed object
	release func(unsafe.Pointer)
}

func newCHandle(kind string, ptr unsafe.Pointer, release func(unsafe.Pointer)) cHandle {
	return cHandle{ptr: ptr, kind: kind, release: release}
}

// borrow returns the C pointer and counts a user; every successful borrow needs one giveBack.
// A nil handle (a method called on a nil wrapper) is reported like a closed one.
func (h *cHandle) borrow() (unsafe.Pointer, error) {
	if h == nil {
		return nil, bindingError(ErrInvalidArgument, "nil nnrt object")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.ptr == nil {
		return nil, bindingError(ErrInvalidArgument, "the %s is closed", h.kind)
	}
	h.users++
	return h.ptr, nil
}

// borrowAgain counts one more user of a handle the caller has borrowed already (so its pointer is
// still set, even if Close came meanwhile), and returns the pointer; it needs its own giveBack.
// A model keeps its context this way (see Model.ctx).
func (h *cHandle) borrowAgain() unsafe.Pointer {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users++
	return h.ptr
}

// giveBack ends a borrow, releasing the C object if it was closed meanwhile.
func (h *cHandle) giveBack() {
	h.mu.Lock()
	h.users--
	p := h.takeIfUnused()
	h.mu.Unlock()
	if p != nil {
		h.release(p)
	}
}

// close marks the handle closed; it is a no-op the second time.
func (h *cHandle) close() {
	h.mu.Lock()
	h.closed = true
	p := h.takeIfUnused()
	h.mu.Unlock()
	if p != nil {
		h.release(p)
	}
}

// takeIfUnused hands the pointer over for release once the handle is closed and unused; the
// caller holds mu.
func (h *cHandle) takeIfUnused() unsafe.Pointer {
	if !h.closed || h.users > 0 || h.ptr == nil {
		return nil
	}
	p := h.ptr
	h.ptr = nil
	return p
}

// borrowAll borrows several handles at once (the inputs of an op), giving back those already
// borrowed if one fails. The same handle may appear twice: borrows are counts, not locks.
func borrowAll(hs []*cHandle) ([]unsafe.Pointer, func(), error) {
	ptrs := make([]unsafe.Pointer, 0, len(hs))
	giveBack := func() {
		for i := range ptrs {
			hs[i].giveBack()
		}
	}
	for _, h := range hs {
		p, err := h.borrow()
		if err != nil {
			giveBack()
			return nil, nil, err
		}
		ptrs = append(ptrs, p)
	}
	return ptrs, giveBack, nil
}
