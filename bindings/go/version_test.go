package nnrt_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"nnrt.dev/nnrt"
)

// The loaded library speaks the ABI this binding was compiled for, and says its version.
func TestABIVersion(t *testing.T) {
	if got := nnrt.LibraryABIVersion(); got != nnrt.HeaderABIVersion {
		t.Fatalf("library ABI %d, header ABI %d", got, nnrt.HeaderABIVersion)
	}
	if nnrt.HeaderABIVersion != 1 {
		t.Fatalf("header ABI %d, this binding is written for ABI 1", nnrt.HeaderABIVersion)
	}
	if err := nnrt.CheckABI(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d.%d.%d", nnrt.VersionMajor, nnrt.VersionMinor, nnrt.VersionPatch)
	if got := nnrt.Version(); got != want {
		t.Fatalf("Version() = %q, the header says %q", got, want)
	}
}

func TestStatusNames(t *testing.T) {
	cases := map[nnrt.Status]string{
		nnrt.OK: "NNRT_OK", nnrt.ErrInvalidArgument: "NNRT_ERR_INVALID_ARGUMENT",
		nnrt.ErrShape: "NNRT_ERR_SHAPE", nnrt.ErrCancelled: "NNRT_ERR_CANCELLED",
		nnrt.ErrInternal: "NNRT_ERR_INTERNAL", nnrt.ErrDeadlineExceeded: "NNRT_ERR_DEADLINE_EXCEEDED",
		nnrt.Status(999): "NNRT_ERR_UNKNOWN",
	}
	for s, want := range cases {
		if s.String() != want {
			t.Errorf("Status(%d).String() = %q, want %q", int(s), s.String(), want)
		}
	}
}

func TestDTypeSizes(t *testing.T) {
	sizes := map[nnrt.DType]int{
		nnrt.F32: 4, nnrt.F64: 8, nnrt.F16: 2, nnrt.BF16: 2,
		nnrt.I32: 4, nnrt.I64: 8, nnrt.U8: 1, nnrt.Bool: 1, nnrt.I8: 1, nnrt.DType(0): 0,
	}
	for d, want := range sizes {
		if d.Size() != want {
			t.Errorf("%v.Size() = %d, want %d", d, d.Size(), want)
		}
	}
}

// The context describes itself as JSON with the keys nnrt.h promises.
func TestContextDescribe(t *testing.T) {
	ctx := newContext(t)
	text := must(ctx.Describe()).on(t)
	var d map[string]any
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatalf("describe is not JSON: %v\n%s", err, text)
	}
	for _, key := range []string{"version", "abi", "backend", "device", "threads", "deterministic",
		"backends", "plugins", "devices", "cache"} {
		if _, ok := d[key]; !ok {
			t.Errorf("describe lacks %q: %s", key, text)
		}
	}
	if d["version"] != nnrt.Version() || d["deterministic"] != true || d["threads"] != float64(2) {
		t.Errorf("describe does not reflect the options: %s", text)
	}
	ref := must(nnrt.NewContext(map[string]any{"backend": "reference", "strict": true})).on(t)
	defer ref.Close()
	var r map[string]any
	if err := json.Unmarshal([]byte(must(ref.Describe()).on(t)), &r); err != nil || r["backend"] != "reference" {
		t.Errorf("the reference context describes itself as %v (%v)", r, err)
	}
}
