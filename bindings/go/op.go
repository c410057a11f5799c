package nnrt

import (
	"fmt"
	"unsafe"
)

// Op runs the single-output operation name on the context's backend, e.g.
// ctx.Op("matmul", nil, a, b) or ctx.Op("sum", map[string]any{"axes": []int{1}}, a). attrs is
// nil, a map or struct, or JSON text. See nnrt_op in nnrt.h for the ops and their attributes.
// The caller owns (and closes) the result.
func (c *Context) Op(name string, attrs any, inputs ...*Array) (*Array, error) {
	outs, err := c.OpMulti(name, attrs, inputs, 1)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// OpMulti runs an operation with any number of outputs.
func (c *Context) OpMulti(name string, attrs any, inputs []*Array, outputs int) ([]*Array, error) {
	if outputs < 0 {
		return nil, bindingError(ErrInvalidArgument, "%q: %d outputs asked", name, outputs)
	}
	text, err := toJSON(attrs)
	if err != nil {
		return nil, err
	}
	handles := []*cHandle{c.handle()}
	for i, in := range inputs {
		if in == nil {
			return nil, bindingError(ErrInvalidArgument, "input %d of %q is nil", i, name)
		}
		handles = append(handles, in.handle())
	}
	ptrs, giveBack, err := borrowAll(handles)
	if err != nil {
		return nil, err
	}
	defer giveBack()
	outs, err := cOp(ptrs[0], name, ptrs[1:], text, outputs)
	if err != nil {
		return nil, err
	}
	return wrapAll(outs, fmt.Sprintf(" of %q", name))
}

// wrapAll makes Arrays of the new arrays a C call gave; when one cannot be read, it closes those
// made so far, releases the rest, and says which output it was (`of` ends the message's subject).
func wrapAll(outs []unsafe.Pointer, of string) ([]*Array, error) {
	result := make([]*Array, 0, len(outs))
	for i, p := range outs {
		a, err := wrapArray(p) // releases p itself on failure
		if err != nil {
			for _, done := range result {
				done.Close()
			}
			releaseAll(outs[i+1:])
			return nil, fmt.Errorf("reading output %d%s: %w", i, of, err)
		}
		result = append(result, a)
	}
	return result, nil
}

func releaseAll(arrays []unsafe.Pointer) {
	for _, p := range arrays {
		cArrayRelease(p)
	}
}
