package nnrt

import (
	"math"
	"runtime"
	"unsafe"
)

// Model is a network built from a JSON config, with its parameters. A Model is safe for
// concurrent use: many goroutines may Predict at once, also while a Trainer trains it. It keeps
// its context alive, and a trainer keeps its model alive, so the Model may be closed first.
type Model struct {
	h cHandle
	// ctx is the C context the model was made on, which PredictInto lends Go memory to nnrt
	// through (it has the model's backend and device). The model holds a borrow of the Context's
	// handle until it is released, so the pointer stays valid even after Context.Close.
	ctx unsafe.Pointer
	// c is the Context the model was made on, for models made from this one (Share).
	c *Context
}

// wrapModel wraps a new C model made on the borrowed context c.
func wrapModel(p unsafe.Pointer, c *Context) *Model {
	ctxHandle := &c.h
	ctx := ctxHandle.borrowAgain()
	m := &Model{h: newCHandle("model", p, func(p unsafe.Pointer) {
		cModelRelease(p)
		ctxHandle.giveBack()
	}), ctx: ctx, c: c}
	runtime.SetFinalizer(m, (*Model).Close)
	return m
}

func (m *Model) handle() *cHandle {
	if m == nil {
		return nil
	}
	return &m.h
}

// modelFrom makes a model with one C call (create, load or import) on the borrowed context.
func (c *Context) modelFrom(create func(ctx unsafe.Pointer) (unsafe.Pointer, error)) (*Model, error) {
	cp, err := c.borrow()
	if err != nil {
		return nil, err
	}
	defer c.h.giveBack()
	p, err := create(cp)
	if err != nil {
		return nil, err
	}
	return wrapModel(p, c), nil
}

// NewModel builds a model from a config: JSON text, or a map or struct that marshals to it (see
// nnrt_model_create in nnrt.h for layers, graphs, activations and initialisers).
func (c *Context) NewModel(config any) (*Model, error) {
	text, err := toJSON(config)
	if err != nil {
		return nil, err
	}
	return c.modelFrom(func(cp unsafe.Pointer) (unsafe.Pointer, error) { return cModelCreate(cp, text) })
}

// LoadModel loads a model saved by Model.Save or Trainer.Save, checking the file before using it
// (ErrCorrupt for a damaged file, ErrVersion for one from a newer nnrt).
func (c *Context) LoadModel(path string) (*Model, error) {
	return c.modelFrom(func(cp unsafe.Pointer) (unsafe.Pointer, error) { return cModelLoad(cp, path) })
}

// LoadModelWith is LoadModel stopped early as opts say (nil: never): cancelled or past its
// timeout before reading, after reading and checking, after building the model or before a
// parameter's upload, it returns ErrCancelled or ErrDeadlineExceeded and makes no model.
func (c *Context) LoadModelWith(path string, opts *RunOptions) (*Model, error) {
	return c.modelFrom(func(cp unsafe.Pointer) (unsafe.Pointer, error) {
		op, giveBack, err := opts.borrowOrNil()
		if err != nil {
			return nil, err
		}
		defer giveBack()
		return cModelLoadEx(cp, path, op)
	})
}

// ImportONNX imports an ONNX model (a .onnx file, opsets 7 to 17) as an nnrt graph model.
// options is nil for the defaults, or JSON text (or a map) with "batch" (true: ONNX dim 0 is the
// batch), "batch_axis" (another ONNX dim that is, e.g. 1 for a time-major [T, N, F] input), "input" (the example shape, for symbolic dims) and "loss" (the final Gemm becomes an
// output layer, so that the model trains). An op nnrt cannot run is ErrUnsupported naming the
// node, op type and opset; a malformed file ErrCorrupt.
func (c *Context) ImportONNX(path string, options any) (*Model, error) {
	text, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	return c.modelFrom(func(cp unsafe.Pointer) (unsafe.Pointer, error) { return cModelImportONNX(cp, path, text) })
}

// ImportONNXWith is ImportONNX stopped early as opts say (nil: never): checked before and after the
// converter parses and converts the file, after the model is built and before each parameter's
// upload; a stopped import is ErrCancelled or ErrDeadlineExceeded and makes no model.
func (c *Context) ImportONNXWith(path string, options any, opts *RunOptions) (*Model, error) {
	text, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	return c.modelFrom(func(cp unsafe.Pointer) (unsafe.Pointer, error) {
		op, giveBack, err := opts.borrowOrNil()
		if err != nil {
			return nil, err
		}
		defer giveBack()
		return cModelImportONNXEx(cp, path, text, op)
	})
}

// ImportONNXBytes is ImportONNX from the contents of a .onnx file; nnrt keeps no reference to
// data. Tensors with external data need the model's folder and are ErrUnsupported.
func (c *Context) ImportONNXBytes(data []byte, options any) (*Model, error) {
	text, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	return c.modelFrom(func(cp unsafe.Pointer) (unsafe.Pointer, error) {
		return cModelImportONNXMemory(cp, slicePtr(data), len(data), text)
	})
}

// ExportONNX writes the model to path as ONNX (opset 17, parameters as initializers, a symbolic
// batch dim), atomically; a layer with no ONNX form here (lstm) is ErrUnsupported.
func (m *Model) ExportONNX(path string) error {
	p, err := m.handle().borrow()
	if err != nil {
		return err
	}
	defer m.h.giveBack()
	return cModelExportONNX(p, path)
}

// Save writes the config and parameters to path as one safetensors file, atomically.
func (m *Model) Save(path string) error {
	p, err := m.handle().borrow()
	if err != nil {
		return err
	}
	defer m.h.giveBack()
	return cModelSave(p, path)
}

// Predict runs the model on a batch shaped [N, <input shape>] and returns its first output as a
// new F32 array [N, <output shape>] (for an output layer, e.g. class probabilities). A model of
// several inputs (a config's "inputs") is ErrInvalidArgument: PredictMany runs those.
func (m *Model) Predict(input *Array) (*Array, error) {
	ptrs, giveBack, err := borrowAll([]*cHandle{m.handle(), input.handle()})
	if err != nil {
		return nil, err
	}
	defer giveBack()
	p, err := cModelPredict(ptrs[0], ptrs[1])
	if err != nil {
		return nil, err
	}
	return wrapArray(p)
}

// PredictWith is Predict stopped early as opts say (nil: never): after opts.Cancel (until
// opts.Reset) it returns ErrCancelled, past the options' timeout ErrDeadlineExceeded. A stopped
// call gives no output and leaves the model usable at once.
func (m *Model) PredictWith(input *Array, opts *RunOptions) (*Array, error) {
	ptrs, giveBack, err := borrowAll([]*cHandle{m.handle(), input.handle()})
	if err != nil {
		return nil, err
	}
	defer giveBack()
	op, giveBackOpts, err := opts.borrowOrNil()
	if err != nil {
		return nil, err
	}
	defer giveBackOpts()
	p, err := cModelPredictEx(ptrs[0], ptrs[1], op)
	if err != nil {
		return nil, err
	}
	return wrapArray(p)
}

// OutputShape returns the shape of the prediction for a batch of batch examples:
// [batch, <output shape>].
func (m *Model) OutputShape(batch int64) ([]int64, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return nil, err
	}
	defer m.h.giveBack()
	return cModelOutputShape(p, batch)
}

// ModelInput describes one input of a model: its name (a config's "inputs" entry, or "input" for a
// model of one input) and the shape of one example, without the batch dim.
type ModelInput struct {
	Name  string
	Shape []int64
}

// Inputs describes the model's inputs in the order PredictMany takes them: one, named "input", for
// a config with "input"; the config's "inputs" otherwise (nnrt_model_input_count and
// nnrt_model_input).
func (m *Model) Inputs() ([]ModelInput, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return nil, err
	}
	defer m.h.giveBack()
	n, err := cModelInputCount(p)
	if err != nil {
		return nil, err
	}
	inputs := make([]ModelInput, n)
	for i := range inputs {
		if inputs[i].Name, inputs[i].Shape, err = cModelInput(p, i); err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// OutputCount returns the number of the model's outputs: the length of a config's "outputs" (1 for
// "layers"), and so of what PredictMany returns.
func (m *Model) OutputCount() (int, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return 0, err
	}
	defer m.h.giveBack()
	return cModelOutputCount(p)
}

// PredictMany runs a model of one or several inputs (a config's "inputs"; Inputs says what each
// is) on one batch per input, in the order of Inputs: inputs[k] shaped [N, <input k's shape>],
// every input with the same N, of any numeric dtype (an I64 or F32 array of token ids, say). It
// returns every output of the model, in the config's "outputs" order, each a new F32 array
// [N, <output shape>] that the caller owns (and closes). A wrong number of inputs is
// ErrInvalidArgument, an input of another shape or batch ErrShape (nnrt_model_predict_many). On
// error it returns no arrays.
func (m *Model) PredictMany(inputs []*Array) ([]*Array, error) {
	return m.PredictManyWith(inputs, nil)
}

// PredictManyWith is PredictMany stopped early as opts say (nil: never): ErrCancelled or
// ErrDeadlineExceeded, with no outputs, leaving the model usable at once.
func (m *Model) PredictManyWith(inputs []*Array, opts *RunOptions) ([]*Array, error) {
	handles := []*cHandle{m.handle()}
	for i, in := range inputs {
		if in == nil {
			return nil, bindingError(ErrInvalidArgument, "input %d is nil", i)
		}
		handles = append(handles, in.handle())
	}
	ptrs, giveBack, err := borrowAll(handles)
	if err != nil {
		return nil, err
	}
	defer giveBack()
	op, giveBackOpts, err := opts.borrowOrNil()
	if err != nil {
		return nil, err
	}
	defer giveBackOpts()
	n, err := cModelOutputCount(ptrs[0])
	if err != nil {
		return nil, err
	}
	outs, err := cModelPredictMany(ptrs[0], ptrs[1:], op, n)
	if err != nil {
		return nil, err
	}
	return wrapAll(outs, "")
}

// PredictInto runs the model on a batch held in a Go slice and writes the prediction into
// another, without copying either: input holds the row-major elements of a batch shaped shape
// ([N, <input shape>]), and output exactly the elements of OutputShape(N). nnrt reads and writes
// the slices in place during this one call only (nnrt_array_wrap_host and
// nnrt_model_predict_into, done in one cgo call) and keeps nothing afterwards, so the caller may
// change input and call again. On a backend whose arrays are not in host memory (a GPU) the
// input is copied to the device and the prediction back instead, with the same result. Safe to
// call from many goroutines at once with different outputs. On failure the contents of output
// are unspecified.
func (m *Model) PredictInto(input []float32, shape []int64, output []float32) error {
	return m.PredictIntoWith(input, shape, output, nil)
}

// PredictIntoWith is PredictInto stopped early as opts say (nil: never): ErrCancelled or
// ErrDeadlineExceeded.
func (m *Model) PredictIntoWith(input []float32, shape []int64, output []float32, opts *RunOptions) error {
	if len(shape) == 0 {
		return bindingError(ErrShape, "the shape is [], a scalar; a batch [N, <input shape>] is expected")
	}
	needed, err := elementCount(shape)
	if err != nil {
		return err
	}
	if needed != len(input) {
		return bindingError(ErrInvalidArgument, "input holds %d elements; shape %v needs %d", len(input), shape, needed)
	}
	p, err := m.handle().borrow()
	if err != nil {
		return err
	}
	defer m.h.giveBack()
	outShape, err := cModelOutputShape(p, shape[0])
	if err != nil {
		return err
	}
	if needed, err = elementCount(outShape); err != nil {
		return err
	}
	if needed != len(output) {
		return bindingError(ErrShape, "output holds %d elements; the prediction for a batch of %d is %v, %d elements",
			len(output), shape[0], outShape, needed)
	}
	op, giveBackOpts, err := opts.borrowOrNil()
	if err != nil {
		return err
	}
	defer giveBackOpts()
	return cModelPredictIntoHost(p, m.ctx, F32, shape, slicePtr(input), byteLen(input), outShape,
		slicePtr(output), byteLen(output), op)
}

// elementCount is the number of elements of a shape; a negative dimension or an overflowing count
// is refused as nnrt would refuse it.
func elementCount(shape []int64) (int, error) {
	count := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, bindingError(ErrInvalidArgument, "shape %v has a negative dimension", shape)
		}
		if d != 0 && count > math.MaxInt/d {
			return 0, bindingError(ErrInvalidArgument, "shape %v holds too many elements", shape)
		}
		count *= d
	}
	return int(count), nil
}

// Generate returns up to maxTokens tokens continuing prompt (token ids) with a token model such as
// a trained examples/gpt.json, using its key/value cache (nnrt_model_generate). options is nil for
// greedy generation, or JSON text or a map with "temperature", "top_k", "seed", "stop",
// "when_full" and "cache" as nnrt.h describes them. The C call's per-token callback is not offered
// here: the tokens come back together.
func (m *Model) Generate(prompt []int64, maxTokens int, options any) ([]int64, error) {
	if maxTokens < 0 {
		return nil, bindingError(ErrInvalidArgument, "maxTokens is %d; expected 0 or more", maxTokens)
	}
	opts, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	p, err := m.handle().borrow()
	if err != nil {
		return nil, err
	}
	defer m.h.giveBack()
	return cModelGenerate(p, prompt, opts, maxTokens)
}

// Summary describes the model as JSON: layers with output shapes, parameters and the backend that
// ran each op, and the parameter totals.
func (m *Model) Summary() (string, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return "", err
	}
	defer m.h.giveBack()
	return cModelSummary(p)
}

// Share returns another model of the same config on the same context whose parameters are this
// model's memory, not a copy, so that many instances cost the parameters once. Parameters are
// copied on write: a model that is trained or has a parameter set gets its own copy first, so the
// others never see the change (nnrt_model_share).
func (m *Model) Share() (*Model, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return nil, err
	}
	defer m.h.giveBack()
	q, err := cModelShare(p)
	if err != nil {
		return nil, err
	}
	return wrapModel(q, m.c), nil
}

// Quantize returns an int8 copy of the model for inference (post-training static quantization,
// nnrt_model_quantize), calibrated on the examples of calibration (its labels are not used): each
// dense and conv2d layer gets I8 weights with a scale per output unit or filter, and quantizes its
// input with a scale fixed from the range it took on the calibration examples. options is nil for
// the defaults, or JSON text or a map with "batches" (default 8; 0: all), "batch_size" (32),
// "weight_bits" (7, the default, or 8) and "exclude" (layer names kept in float). The copy is
// independent of this model: it predicts, evaluates, saves and shares (Param gives its integer
// weights as F32, SetParam takes I8 values for them), but NewTrainer and ExportONNX refuse it with
// ErrUnsupported, as does quantizing it again. Calibration examples that do not fit the model are
// ErrShape.
func (m *Model) Quantize(calibration *Dataset, options any) (*Model, error) {
	text, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	ptrs, giveBack, err := borrowAll([]*cHandle{m.handle(), calibration.handle()})
	if err != nil {
		return nil, err
	}
	defer giveBack()
	q, err := cModelQuantize(ptrs[0], ptrs[1], text)
	if err != nil {
		return nil, err
	}
	return wrapModel(q, m.c), nil
}

// ParamCount returns the number of parameter elements (weights, biases and statistics).
func (m *Model) ParamCount() (int64, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return 0, err
	}
	defer m.h.giveBack()
	return cModelParamCount(p)
}

// Param returns a copy of the parameter name (such as "conv1.weight") as a new F32 array (a
// quantized weight's integers too).
func (m *Model) Param(name string) (*Array, error) {
	p, err := m.handle().borrow()
	if err != nil {
		return nil, err
	}
	defer m.h.giveBack()
	a, err := cModelGetParam(p, name)
	if err != nil {
		return nil, err
	}
	return wrapArray(a)
}

// SetParam copies value, which must have the parameter's shape, into the parameter name; a float
// value of another dtype is converted. A quantized layer's weight takes I8 values only (within
// [-63, 63] for 7-bit weights).
func (m *Model) SetParam(name string, value *Array) error {
	ptrs, giveBack, err := borrowAll([]*cHandle{m.handle(), value.handle()})
	if err != nil {
		return err
	}
	defer giveBack()
	return cModelSetParam(ptrs[0], name, ptrs[1])
}

// Evaluate runs the model over every example of data and returns the metrics.
func (m *Model) Evaluate(data *Dataset) (*Evaluation, error) {
	ptrs, giveBack, err := borrowAll([]*cHandle{m.handle(), data.handle()})
	if err != nil {
		return nil, err
	}
	defer giveBack()
	p, err := cModelEvaluate(ptrs[0], ptrs[1])
	if err != nil {
		return nil, err
	}
	return wrapEvaluation(p), nil
}

// EvaluateWith is Evaluate stopped early as opts say (nil: never; checked between batches and
// before every op): ErrCancelled or ErrDeadlineExceeded, and no evaluation.
func (m *Model) EvaluateWith(data *Dataset, opts *RunOptions) (*Evaluation, error) {
	ptrs, giveBack, err := borrowAll([]*cHandle{m.handle(), data.handle()})
	if err != nil {
		return nil, err
	}
	defer giveBack()
	op, giveBackOpts, err := opts.borrowOrNil()
	if err != nil {
		return nil, err
	}
	defer giveBackOpts()
	p, err := cModelEvaluateEx(ptrs[0], ptrs[1], op)
	if err != nil {
		return nil, err
	}
	return wrapEvaluation(p), nil
}

// Close releases the caller's reference; a trainer of the model keeps it alive. Calling Close
// again does nothing.
func (m *Model) Close() {
	if m == nil {
		return
	}
	runtime.SetFinalizer(m, nil)
	m.h.close()
}
