package nnrt

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// Dataset holds examples and labels in host memory, ready for batching. It is read-only once
// made, so it may be used by several goroutines; a trainer fitting on it keeps it alive.
type Dataset struct {
	h cHandle
}

// IDXSpec loads IDX files as in MNIST and Fashion-MNIST, plain or gzip-compressed.
type IDXSpec struct {
	Images string  `json:"images"`
	Labels string  `json:"labels"`
	Scale  float64 `json:"scale,omitempty"` // multiplies the image bytes when batched; default 1/255
	Limit  int64   `json:"limit,omitempty"` // keep only the first examples; 0 keeps all
}

// MarshalJSON adds "format": "idx".
func (s IDXSpec) MarshalJSON() ([]byte, error) {
	type fields IDXSpec // without this method, so Marshal does not recurse
	return json.Marshal(struct {
		Format string `json:"format"`
		fields
	}{"idx", fields(s)})
}

// CSVSpec loads comma-separated numbers, one example per line.
type CSVSpec struct {
	Path        string `json:"path"`
	LabelColumn int    `json:"label_column"` // the class index column; -1 for the last
	Header      bool   `json:"header"`       // skip the first line
	Limit       int64  `json:"limit,omitempty"`
}

// MarshalJSON adds "format": "csv".
func (s CSVSpec) MarshalJSON() ([]byte, error) {
	type fields CSVSpec
	return json.Marshal(struct {
		Format string `json:"format"`
		fields
	}{"csv", fields(s)})
}

func wrapDataset(p unsafe.Pointer) *Dataset {
	d := &Dataset{h: newCHandle("dataset", p, cDatasetRelease)}
	runtime.SetFinalizer(d, (*Dataset).Close)
	return d
}

func (d *Dataset) handle() *cHandle {
	if d == nil {
		return nil
	}
	return &d.h
}

// NewDataset copies features [N, ...] (any numeric dtype) and labels, either class indices [N]
// (I32, I64 or U8) or float targets [N, ...], into a dataset. The arrays may be closed afterwards.
func (c *Context) NewDataset(features, labels *Array) (*Dataset, error) {
	ptrs, giveBack, err := borrowAll([]*cHandle{c.handle(), features.handle(), labels.handle()})
	if err != nil {
		return nil, err
	}
	defer giveBack()
	p, err := cDatasetFromArrays(ptrs[0], ptrs[1], ptrs[2])
	if err != nil {
		return nil, err
	}
	return wrapDataset(p), nil
}

// LoadDataset loads a dataset from files: spec is an IDXSpec, a CSVSpec, or any JSON spec that
// nnrt_dataset_load accepts. Relative paths are relative to the current directory.
func (c *Context) LoadDataset(spec any) (*Dataset, error) {
	text, err := toJSON(spec)
	if err != nil {
		return nil, err
	}
	cp, err := c.borrow()
	if err != nil {
		return nil, err
	}
	defer c.h.giveBack()
	p, err := cDatasetLoad(cp, text)
	if err != nil {
		return nil, err
	}
	return wrapDataset(p), nil
}

// Size returns the number of examples.
func (d *Dataset) Size() (int64, error) {
	p, err := d.handle().borrow()
	if err != nil {
		return 0, err
	}
	defer d.h.giveBack()
	return cDatasetSize(p)
}

// Examples copies examples [start, start+count) into new arrays on ctx's device: features as F32
// [count, <example shape>], scaled as the spec says, and labels as I64 class indices [count] or
// F32 targets [count, ...].
func (d *Dataset) Examples(ctx *Context, start, count int64) (features, labels *Array, err error) {
	return d.examples(ctx, start, count, true)
}

// Features is Examples without the labels.
func (d *Dataset) Features(ctx *Context, start, count int64) (*Array, error) {
	features, _, err := d.examples(ctx, start, count, false)
	return features, err
}

func (d *Dataset) examples(ctx *Context, start, count int64, withLabels bool) (*Array, *Array, error) {
	ptrs, giveBack, err := borrowAll([]*cHandle{ctx.handle(), d.handle()})
	if err != nil {
		return nil, nil, err
	}
	defer giveBack()
	features, labels, err := cDatasetExamples(ptrs[0], ptrs[1], start, count, withLabels)
	if err != nil {
		return nil, nil, err
	}
	// wrapArray releases the array it fails on; the other one is released here.
	f, err := wrapArray(features)
	if err != nil {
		if labels != nil {
			cArrayRelease(labels)
		}
		return nil, nil, err
	}
	if !withLabels {
		return f, nil, nil
	}
	l, err := wrapArray(labels)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, l, nil
}

// Close releases the caller's reference; a trainer fitting on it keeps it alive. Calling Close
// again does nothing.
func (d *Dataset) Close() {
	if d == nil {
		return
	}
	runtime.SetFinalizer(d, nil)
	d.h.close()
}
