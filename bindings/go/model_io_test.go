package nnrt_test

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nnrt.dev/nnrt"
)

// A saved model loads back with the same parameters and the same predictions.
func TestSaveAndLoadModel(t *testing.T) {
	ctx := newContext(t)
	train := blobDataset(t, ctx, 256, 1)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	trainer := must(model.NewTrainer(adamOptions)).on(t)
	defer trainer.Close()
	check(t, trainer.Fit(train, nil, 1))

	path := filepath.Join(t.TempDir(), "mlp.safetensors")
	check(t, model.Save(path))
	loaded := must(ctx.LoadModel(path)).on(t)
	defer loaded.Close()

	if n := must(loaded.ParamCount()).on(t); n != 8*16+16+16*4+4 {
		t.Errorf("ParamCount() = %d", n)
	}
	for _, name := range []string{"hidden.weight", "hidden.bias", "out.weight", "out.bias"} {
		want := values[float32](t, must(model.Param(name)).on(t))
		if got := values[float32](t, must(loaded.Param(name)).on(t)); !equal(got, want) {
			t.Errorf("%s differs after loading", name)
		}
	}
	x, _ := blobs(t, ctx, 16, 9)
	want := values[float32](t, must(model.Predict(x)).on(t))
	if got := values[float32](t, must(loaded.Predict(x)).on(t)); !equal(got, want) {
		t.Error("predictions differ after loading")
	}

	// The summary names the layers and counts the parameters.
	var summary struct {
		Layers      []struct{ Name, Type string } `json:"layers"`
		TotalParams int64                         `json:"total_params"`
	}
	if err := json.Unmarshal([]byte(must(loaded.Summary()).on(t)), &summary); err != nil {
		t.Fatal(err)
	}
	if len(summary.Layers) != 2 || summary.Layers[0].Name != "hidden" || summary.TotalParams != 212 {
		t.Errorf("summary %+v", summary)
	}

	// A damaged file is refused with ErrCorrupt; a trainer-less file cannot be restored.
	data := must(os.ReadFile(path)).on(t)
	data[len(data)-3] ^= 0x40
	damaged := filepath.Join(t.TempDir(), "damaged.safetensors")
	check(t, os.WriteFile(damaged, data, 0o600))
	_, err := ctx.LoadModel(damaged)
	expectError(t, err, nnrt.ErrCorrupt, "checksum")
	expectError(t, trainer.Restore(path), nnrt.ErrInvalidArgument, "")
}

// SetParam writes a parameter that Param reads back; shapes must match.
func TestGetAndSetParam(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	bias := []float32{1, 2, 3, 4}
	check(t, model.SetParam("out.bias", array(t, ctx, bias, 4)))
	if got := values[float32](t, must(model.Param("out.bias")).on(t)); !equal(got, bias) {
		t.Errorf("out.bias = %v", got)
	}
	// A float value of another dtype is converted.
	check(t, model.SetParam("out.bias", array(t, ctx, []float64{4, 3, 2, 1}, 4)))
	if got := values[float32](t, must(model.Param("out.bias")).on(t)); !equal(got, []float32{4, 3, 2, 1}) {
		t.Errorf("out.bias = %v after an f64 set", got)
	}
	expectError(t, model.SetParam("out.bias", array(t, ctx, []float32{1, 2, 3}, 3)), nnrt.ErrShape, "[4]")
	expectError(t, model.SetParam("out.bias", array(t, ctx, []int32{1, 2, 3, 4}, 4)), nnrt.ErrDType, "")
	_, err := model.Param("no.such")
	expectError(t, err, nnrt.ErrInvalidArgument, "hidden.weight")
}

// A trainer's checkpoint restores the training state: in deterministic mode the continued run
// is bit-identical to an uninterrupted one.
func TestTrainerSaveAndRestore(t *testing.T) {
	ctx := newContext(t)
	train := blobDataset(t, ctx, 256, 1)
	newTrainer := func() (*nnrt.Model, *nnrt.Trainer) {
		m := must(ctx.NewModel(mlpConfig)).on(t)
		tr := must(m.NewTrainer(adamOptions)).on(t)
		t.Cleanup(tr.Close)
		t.Cleanup(m.Close)
		return m, tr
	}
	m1, t1 := newTrainer()
	check(t, t1.Fit(train, nil, 1))
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	check(t, t1.Save(path))
	check(t, t1.Fit(train, nil, 1))
	want := must(t1.Result()).on(t)

	m2, t2 := newTrainer()
	check(t, t2.Restore(path))
	check(t, t2.Fit(train, nil, 1))
	got := must(t2.Result()).on(t)
	if got.Epochs != 2 || got.History[1].Loss != want.History[1].Loss {
		t.Errorf("restored run: %d epochs, loss %v; uninterrupted: loss %v", got.Epochs,
			got.History[1].Loss, want.History[1].Loss)
	}
	if !equal(values[float32](t, must(m1.Param("out.weight")).on(t)), values[float32](t, must(m2.Param("out.weight")).on(t))) {
		t.Error("restored training ended with other weights")
	}
	// The checkpoint is also a model file.
	loaded := must(ctx.LoadModel(path)).on(t)
	loaded.Close()
	expectError(t, t2.Restore("/nonexistent-nnrt-folder/t.safetensors"), nnrt.ErrIO, "t.safetensors")
}

// writeIDX writes an IDX file (gzip-compressed if the name ends in .gz) of unsigned bytes.
func writeIDX(t *testing.T, path string, dims []uint32, data []byte) {
	t.Helper()
	f := must(os.Create(path)).on(t)
	defer f.Close()
	var w interface {
		Write([]byte) (int, error)
	} = f
	if strings.HasSuffix(path, ".gz") {
		z := gzip.NewWriter(f)
		defer z.Close()
		w = z
	}
	header := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		header = binary.BigEndian.AppendUint32(header, d)
	}
	_, err := w.Write(append(header, data...))
	check(t, err)
}

// Datasets load from IDX (plain and gzip) and CSV files, and give their examples back.
func TestLoadDatasets(t *testing.T) {
	ctx := newContext(t)
	dir := t.TempDir()
	pixels := make([]byte, 5*2*3)
	for i := range pixels {
		pixels[i] = byte(i * 8)
	}
	writeIDX(t, filepath.Join(dir, "images.gz"), []uint32{5, 2, 3}, pixels)
	writeIDX(t, filepath.Join(dir, "labels"), []uint32{5}, []byte{3, 1, 4, 1, 5})
	idx := must(ctx.LoadDataset(nnrt.IDXSpec{Images: filepath.Join(dir, "images.gz"),
		Labels: filepath.Join(dir, "labels"), Scale: 0.5, Limit: 4})).on(t)
	defer idx.Close()
	if n := must(idx.Size()).on(t); n != 4 {
		t.Fatalf("Size() = %d with limit 4", n)
	}
	features, labels, err := idx.Examples(ctx, 1, 2)
	check(t, err)
	// IDX images are single-channel: [N, 1, H, W], as a conv2d input wants them.
	if !equal(features.Shape(), []int64{2, 1, 2, 3}) || features.DType() != nnrt.F32 {
		t.Errorf("features %v %v", features.DType(), features.Shape())
	}
	if got := values[float32](t, features); got[0] != float32(pixels[6])*0.5 || got[11] != float32(pixels[17])*0.5 {
		t.Errorf("scaled features %v", got)
	}
	if got := values[int64](t, labels); !equal(got, []int64{1, 4}) {
		t.Errorf("labels %v", got)
	}
	onlyFeatures := must(idx.Features(ctx, 0, 4)).on(t)
	onlyFeatures.Close()
	_, _, err = idx.Examples(ctx, 3, 2)
	expectError(t, err, nnrt.ErrInvalidArgument, "")

	csv := filepath.Join(dir, "data.csv")
	check(t, os.WriteFile(csv, []byte("a,b,label\n1,2,0\n3,4,1\n5,6,1\n"), 0o600))
	d := must(ctx.LoadDataset(nnrt.CSVSpec{Path: csv, LabelColumn: -1, Header: true})).on(t)
	defer d.Close()
	f, l, err := d.Examples(ctx, 0, 3)
	check(t, err)
	if got := values[float32](t, f); !equal(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("csv features %v", got)
	}
	if got := values[int64](t, l); !equal(got, []int64{0, 1, 1}) {
		t.Errorf("csv labels %v", got)
	}
	check(t, os.WriteFile(csv, []byte("1,2,0\n3,x,1\n"), 0o600))
	_, err = ctx.LoadDataset(nnrt.CSVSpec{Path: csv})
	expectError(t, err, nnrt.ErrCorrupt, "data.csv")
	writeIDX(t, filepath.Join(dir, "few-labels"), []uint32{3}, []byte{1, 2, 3})
	_, err = ctx.LoadDataset(nnrt.IDXSpec{Images: filepath.Join(dir, "images.gz"), Labels: filepath.Join(dir, "few-labels")})
	expectError(t, err, nnrt.ErrCorrupt, "")
}

// An exported ONNX model imports back, from its file and from its bytes, to the same predictions,
// and with a loss it trains.
func TestExportAndImportONNX(t *testing.T) {
	ctx := newContext(t)
	model := must(ctx.NewModel(mlpConfig)).on(t)
	defer model.Close()
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	check(t, model.ExportONNX(path))
	fromFile := must(ctx.ImportONNX(path, map[string]any{"loss": "nll"})).on(t)
	defer fromFile.Close()
	onnxBytes := must(os.ReadFile(path)).on(t)
	fromBytes := must(ctx.ImportONNXBytes(onnxBytes, `{"loss": "nll"}`)).on(t)
	defer fromBytes.Close()
	x, _ := blobs(t, ctx, 16, 4)
	want := values[float32](t, must(model.Predict(x)).on(t))
	for name, imported := range map[string]*nnrt.Model{"file": fromFile, "bytes": fromBytes} {
		got := values[float32](t, must(imported.Predict(x)).on(t))
		for i := range want {
			if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
				t.Fatalf("prediction %d: imported from %s %g, exported %g", i, name, got[i], want[i])
			}
		}
		trainer := must(imported.NewTrainer(adamOptions)).on(t)
		defer trainer.Close()
		check(t, trainer.Fit(blobDataset(t, ctx, 64, 2), nil, 1))
	}

	bad := filepath.Join(t.TempDir(), "bad.onnx")
	check(t, os.WriteFile(bad, []byte("not a protobuf \xff\xff"), 0o644))
	_, err := ctx.ImportONNX(bad, nil)
	expectError(t, err, nnrt.ErrCorrupt, "")
	_, err = ctx.ImportONNXBytes(onnxBytes[:len(onnxBytes)/2], nil)
	expectError(t, err, nnrt.ErrCorrupt, "")
}
