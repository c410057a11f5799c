package nnrt

// The C side of models, datasets, trainers and evaluations: one C shim per fallible call, which
// copies nnrt_last_error() inside the same cgo call (see nnrt_go.h), and a Go function around it.

// #include "nnrt_go.h"
//
// static nnrt_status nnrt_go_model_create(nnrt_context *ctx, const char *config, nnrt_model **out,
//                                         char **err) {
//   NNRT_GO_CALL(nnrt_model_create(ctx, config, out));
// }
// static nnrt_status nnrt_go_model_load(nnrt_context *ctx, const char *path, nnrt_model **out,
//                                       char **err) {
//   NNRT_GO_CALL(nnrt_model_load(ctx, path, out));
// }
// static nnrt_status nnrt_go_model_import_onnx(nnrt_context *ctx, const char *path,
//                                              const char *options, nnrt_model **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_import_onnx(ctx, path, options, out));
// }
// static nnrt_status nnrt_go_model_import_onnx_memory(nnrt_context *ctx, const void *data,
//                                                     size_t nbytes, const char *options,
//                                                     nnrt_model **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_import_onnx_memory(ctx, data, nbytes, options, out));
// }
// static nnrt_status nnrt_go_model_export_onnx(const nnrt_model *m, const char *path, char **err) {
//   NNRT_GO_CALL(nnrt_model_export_onnx(m, path));
// }
// static nnrt_status nnrt_go_model_save(const nnrt_model *m, const char *path, char **err) {
//   NNRT_GO_CALL(nnrt_model_save(m, path));
// }
// static nnrt_status nnrt_go_model_predict(nnrt_model *m, const nnrt_array *input,
//                                          nnrt_array **output, char **err) {
//   NNRT_GO_CALL(nnrt_model_predict(m, input, output));
// }
// static nnrt_status nnrt_go_model_generate(nnrt_model *m, const int64_t *prompt, size_t prompt_len,
//                                           const char *options, int64_t *tokens, size_t max_tokens,
//                                           size_t *n_tokens, char **err) {
//   NNRT_GO_CALL(nnrt_model_generate(m, prompt, prompt_len, options, tokens, max_tokens, n_tokens,
//                                    NULL, NULL));
// }
// static nnrt_status nnrt_go_model_share(const nnrt_model *m, nnrt_model **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_share(m, out));
// }
// static nnrt_status nnrt_go_model_quantize(nnrt_model *m, nnrt_dataset *calibration,
//                                           const char *options, nnrt_model **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_quantize(m, calibration, options, out));
// }
// static nnrt_status nnrt_go_model_param_count(const nnrt_model *m, int64_t *count, char **err) {
//   NNRT_GO_CALL(nnrt_model_param_count(m, count));
// }
// static nnrt_status nnrt_go_model_get_param(const nnrt_model *m, const char *name,
//                                            nnrt_array **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_get_param(m, name, out));
// }
// static nnrt_status nnrt_go_model_set_param(nnrt_model *m, const char *name,
//                                            const nnrt_array *value, char **err) {
//   NNRT_GO_CALL(nnrt_model_set_param(m, name, value));
// }
// static nnrt_status nnrt_go_model_evaluate(nnrt_model *m, nnrt_dataset *data,
//                                           nnrt_evaluation **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_evaluate(m, data, out));
// }
// NNRT_GO_STRING_SHIM(nnrt_model_summary, const nnrt_model *)
// static nnrt_status nnrt_go_model_load_ex(nnrt_context *ctx, const char *path,
//                                          const nnrt_run_options *opts, nnrt_model **out,
//                                          char **err) {
//   NNRT_GO_CALL(nnrt_model_load_ex(ctx, path, opts, out));
// }
// static nnrt_status nnrt_go_model_import_onnx_ex(nnrt_context *ctx, const char *path,
//                                                 const char *options,
//                                                 const nnrt_run_options *opts, nnrt_model **out,
//                                                 char **err) {
//   NNRT_GO_CALL(nnrt_model_import_onnx_ex(ctx, path, options, opts, out));
// }
// static nnrt_status nnrt_go_model_predict_ex(nnrt_model *m, const nnrt_array *input,
//                                             const nnrt_run_options *opts, nnrt_array **output,
//                                             char **err) {
//   NNRT_GO_CALL(nnrt_model_predict_ex(m, input, opts, output));
// }
// static nnrt_status nnrt_go_model_output_shape(const nnrt_model *m, int64_t batch, int32_t *ndim,
//                                               int64_t *shape, char **err) {
//   NNRT_GO_CALL(nnrt_model_output_shape(m, batch, ndim, shape));
// }
// static nnrt_status nnrt_go_model_predict_many(nnrt_model *m, nnrt_array **inputs,
//                                               int32_t n_inputs, const nnrt_run_options *opts,
//                                               nnrt_array **outputs, int32_t n_outputs,
//                                               char **err) {
//   NNRT_GO_CALL(nnrt_model_predict_many(m, (const nnrt_array *const *)inputs, n_inputs, opts,
//                                        outputs, n_outputs));
// }
// static nnrt_status nnrt_go_model_input_count(const nnrt_model *m, int32_t *count, char **err) {
//   NNRT_GO_CALL(nnrt_model_input_count(m, count));
// }
// static nnrt_status nnrt_go_model_output_count(const nnrt_model *m, int32_t *count, char **err) {
//   NNRT_GO_CALL(nnrt_model_output_count(m, count));
// }
// // Input `index`'s name (*name malloc'd, the Go side frees it) and example shape, as
// // NNRT_GO_STRING_SHIM reads a string: asks the length, allocates, fills.
// static nnrt_status nnrt_go_model_input(const nnrt_model *m, int32_t index, char **name,
//                                        int32_t *ndim, int64_t *shape, char **err) {
//   size_t len = 0, cap = 0;
//   char *buf = NULL;
//   for (;;) {
//     nnrt_status st = nnrt_model_input(m, index, buf, cap, &len, ndim, shape);
//     if (st != NNRT_OK) {
//       free(buf);
//       *err = nnrt_go_copy_last_error();
//       return st;
//     }
//     if (buf != NULL && len < cap) break;
//     free(buf);
//     cap = len + 1;
//     buf = (char *)malloc(cap);
//     if (buf == NULL) return NNRT_ERR_OUT_OF_MEMORY;
//   }
//   *name = buf;
//   return NNRT_OK;
// }
// static nnrt_status nnrt_go_model_evaluate_ex(nnrt_model *m, nnrt_dataset *data,
//                                              const nnrt_run_options *opts,
//                                              nnrt_evaluation **out, char **err) {
//   NNRT_GO_CALL(nnrt_model_evaluate_ex(m, data, opts, out));
// }
//
// static nnrt_status nnrt_go_run_options_create(nnrt_run_options **out, char **err) {
//   NNRT_GO_CALL(nnrt_run_options_create(out));
// }
// static nnrt_status nnrt_go_run_options_cancel(nnrt_run_options *o, char **err) {
//   NNRT_GO_CALL(nnrt_run_options_cancel(o));
// }
// static nnrt_status nnrt_go_run_options_reset(nnrt_run_options *o, char **err) {
//   NNRT_GO_CALL(nnrt_run_options_reset(o));
// }
// static nnrt_status nnrt_go_run_options_set_timeout(nnrt_run_options *o, double seconds,
//                                                    char **err) {
//   NNRT_GO_CALL(nnrt_run_options_set_timeout(o, seconds));
// }
//
// static nnrt_status nnrt_go_dataset_from_arrays(nnrt_context *ctx, const nnrt_array *features,
//                                                const nnrt_array *labels, nnrt_dataset **out,
//                                                char **err) {
//   NNRT_GO_CALL(nnrt_dataset_from_arrays(ctx, features, labels, out));
// }
// static nnrt_status nnrt_go_dataset_load(nnrt_context *ctx, const char *spec, nnrt_dataset **out,
//                                         char **err) {
//   NNRT_GO_CALL(nnrt_dataset_load(ctx, spec, out));
// }
// static nnrt_status nnrt_go_dataset_size(const nnrt_dataset *d, int64_t *n, char **err) {
//   NNRT_GO_CALL(nnrt_dataset_size(d, n));
// }
// static nnrt_status nnrt_go_dataset_examples(nnrt_context *ctx, const nnrt_dataset *d,
//                                             int64_t start, int64_t count, nnrt_array **features,
//                                             nnrt_array **labels, char **err) {
//   NNRT_GO_CALL(nnrt_dataset_examples(ctx, d, start, count, features, labels));
// }
//
// extern int nnrt_go_progress_trampoline(const nnrt_progress *p, void *user);
// static nnrt_status nnrt_go_trainer_create(nnrt_model *m, const char *options, nnrt_trainer **out,
//                                           char **err) {
//   NNRT_GO_CALL(nnrt_trainer_create(m, options, out));
// }
// // sink is a runtime/cgo.Handle number (0 for none), handed to nnrt as the user pointer.
// static nnrt_status nnrt_go_trainer_set_progress(nnrt_trainer *t, uintptr_t sink, char **err) {
//   NNRT_GO_CALL(nnrt_trainer_set_progress(t, sink ? nnrt_go_progress_trampoline : NULL,
//                                          (void *)sink));
// }
// static nnrt_status nnrt_go_trainer_step(nnrt_trainer *t, const nnrt_array *x,
//                                         const nnrt_array *y, double *loss, char **err) {
//   NNRT_GO_CALL(nnrt_trainer_step(t, x, y, loss));
// }
// static nnrt_status nnrt_go_trainer_fit(nnrt_trainer *t, nnrt_dataset *train,
//                                        nnrt_dataset *validation, int32_t epochs, char **err) {
//   NNRT_GO_CALL(nnrt_trainer_fit(t, train, validation, epochs));
// }
// static nnrt_status nnrt_go_trainer_save(const nnrt_trainer *t, const char *path, char **err) {
//   NNRT_GO_CALL(nnrt_trainer_save(t, path));
// }
// static nnrt_status nnrt_go_trainer_restore(nnrt_trainer *t, const char *path, char **err) {
//   NNRT_GO_CALL(nnrt_trainer_restore(t, path));
// }
// static nnrt_status nnrt_go_trainer_cancel(nnrt_trainer *t, char **err) {
//   NNRT_GO_CALL(nnrt_trainer_cancel(t));
// }
// static nnrt_status nnrt_go_trainer_rank(const nnrt_trainer *t, int32_t *rank, int32_t *world,
//                                         char **err) {
//   NNRT_GO_CALL(nnrt_trainer_rank(t, rank, world));
// }
// NNRT_GO_STRING_SHIM(nnrt_trainer_result, const nnrt_trainer *)
//
// static nnrt_status nnrt_go_evaluation_accuracy(const nnrt_evaluation *e, double *accuracy,
//                                                char **err) {
//   NNRT_GO_CALL(nnrt_evaluation_accuracy(e, accuracy));
// }
// NNRT_GO_STRING_SHIM(nnrt_evaluation_report, const nnrt_evaluation *)
import "C"

import "unsafe"

func cModelCreate(ctx unsafe.Pointer, config jsonText) (unsafe.Pointer, error) {
	text := cJSONText(config)
	defer freeCString(text)
	var out *C.nnrt_model
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_create((*C.nnrt_context)(ctx), text, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelLoad(ctx unsafe.Pointer, path string) (unsafe.Pointer, error) {
	cpath := cString(path)
	defer freeCString(cpath)
	var out *C.nnrt_model
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_load((*C.nnrt_context)(ctx), cpath, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelImportONNX(ctx unsafe.Pointer, path string, options jsonText) (unsafe.Pointer, error) {
	cpath := cString(path)
	defer freeCString(cpath)
	text := cJSONText(options)
	defer freeCString(text)
	var out *C.nnrt_model
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_import_onnx((*C.nnrt_context)(ctx), cpath, text, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

// cModelImportONNXMemory reads nbytes at data: Go memory that holds no Go pointers and that C uses
// only during the call, as the cgo rules require.
func cModelImportONNXMemory(ctx unsafe.Pointer, data unsafe.Pointer, nbytes int, options jsonText) (unsafe.Pointer, error) {
	text := cJSONText(options)
	defer freeCString(text)
	var out *C.nnrt_model
	var msg *C.char
	st := C.nnrt_go_model_import_onnx_memory((*C.nnrt_context)(ctx), data, C.size_t(nbytes), text, &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelExportONNX(m unsafe.Pointer, path string) error {
	cpath := cString(path)
	defer freeCString(cpath)
	var msg *C.char
	return errorFrom(C.nnrt_go_model_export_onnx((*C.nnrt_model)(m), cpath, &msg), msg)
}

func cModelSave(m unsafe.Pointer, path string) error {
	cpath := cString(path)
	defer freeCString(cpath)
	var msg *C.char
	return errorFrom(C.nnrt_go_model_save((*C.nnrt_model)(m), cpath, &msg), msg)
}

func cModelRelease(m unsafe.Pointer) { C.nnrt_model_release((*C.nnrt_model)(m)) }

func cModelPredict(m, input unsafe.Pointer) (unsafe.Pointer, error) {
	var out *C.nnrt_array
	var msg *C.char
	st := C.nnrt_go_model_predict((*C.nnrt_model)(m), (*C.nnrt_array)(input), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

// cModelGenerate passes Go slices' memory for the length of the call (cgo allows it: they hold no
// Go pointers). The tokens come back in a slice of max entries, cut to the count written.
func cModelLoadEx(ctx unsafe.Pointer, path string, opts unsafe.Pointer) (unsafe.Pointer, error) {
	cpath := cString(path)
	defer freeCString(cpath)
	var out *C.nnrt_model
	var msg *C.char
	st := C.nnrt_go_model_load_ex((*C.nnrt_context)(ctx), cpath, (*C.nnrt_run_options)(opts), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelImportONNXEx(ctx unsafe.Pointer, path string, options jsonText, opts unsafe.Pointer) (unsafe.Pointer, error) {
	cpath := cString(path)
	defer freeCString(cpath)
	text := cJSONText(options)
	defer freeCString(text)
	var out *C.nnrt_model
	var msg *C.char
	st := C.nnrt_go_model_import_onnx_ex((*C.nnrt_context)(ctx), cpath, text, (*C.nnrt_run_options)(opts), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelPredictEx(m, input, opts unsafe.Pointer) (unsafe.Pointer, error) {
	var out *C.nnrt_array
	var msg *C.char
	st := C.nnrt_go_model_predict_ex((*C.nnrt_model)(m), (*C.nnrt_array)(input), (*C.nnrt_run_options)(opts), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

// cModelPredictMany runs a model of several inputs; on success the caller owns the outputs, and on
// failure nnrt wrote none.
func cModelPredictMany(m unsafe.Pointer, inputs []unsafe.Pointer, opts unsafe.Pointer, outputs int) ([]unsafe.Pointer, error) {
	// Go slices of C pointers may be passed to C: they hold no Go pointers. One spare entry each
	// keeps &x[0] valid when a count is 0.
	ins := make([]*C.nnrt_array, len(inputs)+1)
	for i, p := range inputs {
		ins[i] = (*C.nnrt_array)(p)
	}
	outs := make([]*C.nnrt_array, outputs+1)
	var msg *C.char
	st := C.nnrt_go_model_predict_many((*C.nnrt_model)(m), &ins[0], C.int32_t(len(inputs)),
		(*C.nnrt_run_options)(opts), &outs[0], C.int32_t(outputs), &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	result := make([]unsafe.Pointer, outputs)
	for i := range result {
		result[i] = unsafe.Pointer(outs[i])
	}
	return result, nil
}

func cModelInputCount(m unsafe.Pointer) (int, error) {
	var n C.int32_t
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_input_count((*C.nnrt_model)(m), &n, &msg), msg); err != nil {
		return 0, err
	}
	return int(n), nil
}

func cModelOutputCount(m unsafe.Pointer) (int, error) {
	var n C.int32_t
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_output_count((*C.nnrt_model)(m), &n, &msg), msg); err != nil {
		return 0, err
	}
	return int(n), nil
}

// cModelInput returns input index's name and the shape of one example.
func cModelInput(m unsafe.Pointer, index int) (string, []int64, error) {
	var name *C.char
	var ndim C.int32_t
	var shape [MaxDims]C.int64_t
	var msg *C.char
	st := C.nnrt_go_model_input((*C.nnrt_model)(m), C.int32_t(index), &name, &ndim, &shape[0], &msg)
	if err := errorFrom(st, msg); err != nil {
		return "", nil, err
	}
	out := make([]int64, int(ndim))
	for i := range out {
		out[i] = int64(shape[i])
	}
	return goStringFree(name), out, nil
}

func cModelOutputShape(m unsafe.Pointer, batch int64) ([]int64, error) {
	var ndim C.int32_t
	var shape [MaxDims]C.int64_t
	var msg *C.char
	st := C.nnrt_go_model_output_shape((*C.nnrt_model)(m), C.int64_t(batch), &ndim, &shape[0], &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	out := make([]int64, int(ndim))
	for i := range out {
		out[i] = int64(shape[i])
	}
	return out, nil
}

// cModelPredictIntoHost predicts from inBytes of Go memory at input (dtype elements of inShape)
// into outBytes of Go memory at output (F32 elements of outShape) in one cgo call (see
// nnrt_go_model_predict_into_host in nnrt_go.h): the memory is lent to nnrt only while the call
// runs, as the cgo rules require, and holds no Go pointers.
func cModelPredictIntoHost(m, ctx unsafe.Pointer, dtype DType, inShape []int64, input unsafe.Pointer, inBytes int,
	outShape []int64, output unsafe.Pointer, outBytes int, opts unsafe.Pointer) error {
	var msg *C.char
	st := C.nnrt_go_model_predict_into_host((*C.nnrt_model)(m), (*C.nnrt_context)(ctx), C.nnrt_dtype(dtype),
		C.int32_t(len(inShape)), shapePtr(inShape), input, C.size_t(inBytes),
		C.int32_t(len(outShape)), shapePtr(outShape), output, C.size_t(outBytes),
		(*C.nnrt_run_options)(opts), &msg)
	return errorFrom(st, msg)
}

func cModelGenerate(m unsafe.Pointer, prompt []int64, options jsonText, max int) ([]int64, error) {
	text := cJSONText(options)
	defer freeCString(text)
	tokens := make([]int64, max+1) // +1: a valid pointer even for max 0
	var p *C.int64_t
	if len(prompt) > 0 {
		p = (*C.int64_t)(unsafe.Pointer(&prompt[0]))
	}
	var n C.size_t
	var msg *C.char
	st := C.nnrt_go_model_generate((*C.nnrt_model)(m), p, C.size_t(len(prompt)), text,
		(*C.int64_t)(unsafe.Pointer(&tokens[0])), C.size_t(max), &n, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return tokens[:int(n)], nil
}

func cModelSummary(m unsafe.Pointer) (string, error) {
	var out, msg *C.char
	if err := errorFrom(C.nnrt_go_nnrt_model_summary((*C.nnrt_model)(m), &out, &msg), msg); err != nil {
		return "", err
	}
	return goStringFree(out), nil
}

func cModelShare(m unsafe.Pointer) (unsafe.Pointer, error) {
	var out *C.nnrt_model
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_share((*C.nnrt_model)(m), &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelQuantize(m, calibration unsafe.Pointer, options jsonText) (unsafe.Pointer, error) {
	text := cJSONText(options)
	defer freeCString(text)
	var out *C.nnrt_model
	var msg *C.char
	st := C.nnrt_go_model_quantize((*C.nnrt_model)(m), (*C.nnrt_dataset)(calibration), text, &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelParamCount(m unsafe.Pointer) (int64, error) {
	var n C.int64_t
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_param_count((*C.nnrt_model)(m), &n, &msg), msg); err != nil {
		return 0, err
	}
	return int64(n), nil
}

func cModelGetParam(m unsafe.Pointer, name string) (unsafe.Pointer, error) {
	cname := cString(name)
	defer freeCString(cname)
	var out *C.nnrt_array
	var msg *C.char
	if err := errorFrom(C.nnrt_go_model_get_param((*C.nnrt_model)(m), cname, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cModelSetParam(m unsafe.Pointer, name string, value unsafe.Pointer) error {
	cname := cString(name)
	defer freeCString(cname)
	var msg *C.char
	return errorFrom(C.nnrt_go_model_set_param((*C.nnrt_model)(m), cname, (*C.nnrt_array)(value), &msg), msg)
}

func cModelEvaluate(m, data unsafe.Pointer) (unsafe.Pointer, error) {
	var out *C.nnrt_evaluation
	var msg *C.char
	st := C.nnrt_go_model_evaluate((*C.nnrt_model)(m), (*C.nnrt_dataset)(data), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cDatasetFromArrays(ctx, features, labels unsafe.Pointer) (unsafe.Pointer, error) {
	var out *C.nnrt_dataset
	var msg *C.char
	st := C.nnrt_go_dataset_from_arrays((*C.nnrt_context)(ctx), (*C.nnrt_array)(features),
		(*C.nnrt_array)(labels), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cDatasetLoad(ctx unsafe.Pointer, spec jsonText) (unsafe.Pointer, error) {
	text := cJSONText(spec)
	defer freeCString(text)
	var out *C.nnrt_dataset
	var msg *C.char
	if err := errorFrom(C.nnrt_go_dataset_load((*C.nnrt_context)(ctx), text, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cDatasetSize(d unsafe.Pointer) (int64, error) {
	var n C.int64_t
	var msg *C.char
	if err := errorFrom(C.nnrt_go_dataset_size((*C.nnrt_dataset)(d), &n, &msg), msg); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// cDatasetExamples copies examples into new arrays; labels stays nil unless withLabels.
func cDatasetExamples(ctx, d unsafe.Pointer, start, count int64, withLabels bool) (features, labels unsafe.Pointer, err error) {
	var f, l *C.nnrt_array
	labelsOut := &l
	if !withLabels {
		labelsOut = nil
	}
	var msg *C.char
	st := C.nnrt_go_dataset_examples((*C.nnrt_context)(ctx), (*C.nnrt_dataset)(d), C.int64_t(start),
		C.int64_t(count), &f, labelsOut, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, nil, err
	}
	return unsafe.Pointer(f), unsafe.Pointer(l), nil
}

func cDatasetRelease(d unsafe.Pointer) { C.nnrt_dataset_release((*C.nnrt_dataset)(d)) }

func cTrainerCreate(m unsafe.Pointer, options jsonText) (unsafe.Pointer, error) {
	text := cJSONText(options)
	defer freeCString(text)
	var out *C.nnrt_trainer
	var msg *C.char
	if err := errorFrom(C.nnrt_go_trainer_create((*C.nnrt_model)(m), text, &out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cTrainerRelease(t unsafe.Pointer) { C.nnrt_trainer_release((*C.nnrt_trainer)(t)) }

// cTrainerSetProgress installs the trampoline with a runtime/cgo.Handle number as the user
// pointer, or removes the callback for 0.
func cTrainerSetProgress(t unsafe.Pointer, sink uintptr) error {
	var msg *C.char
	return errorFrom(C.nnrt_go_trainer_set_progress((*C.nnrt_trainer)(t), C.uintptr_t(sink), &msg), msg)
}

func cTrainerStep(t, x, y unsafe.Pointer) (float64, error) {
	var loss C.double
	var msg *C.char
	st := C.nnrt_go_trainer_step((*C.nnrt_trainer)(t), (*C.nnrt_array)(x), (*C.nnrt_array)(y), &loss, &msg)
	if err := errorFrom(st, msg); err != nil {
		return 0, err
	}
	return float64(loss), nil
}

func cTrainerFit(t, train, validation unsafe.Pointer, epochs int) error {
	var msg *C.char
	st := C.nnrt_go_trainer_fit((*C.nnrt_trainer)(t), (*C.nnrt_dataset)(train),
		(*C.nnrt_dataset)(validation), C.int32_t(epochs), &msg)
	return errorFrom(st, msg)
}

func cTrainerResult(t unsafe.Pointer) (string, error) {
	var out, msg *C.char
	if err := errorFrom(C.nnrt_go_nnrt_trainer_result((*C.nnrt_trainer)(t), &out, &msg), msg); err != nil {
		return "", err
	}
	return goStringFree(out), nil
}

func cTrainerSave(t unsafe.Pointer, path string) error {
	cpath := cString(path)
	defer freeCString(cpath)
	var msg *C.char
	return errorFrom(C.nnrt_go_trainer_save((*C.nnrt_trainer)(t), cpath, &msg), msg)
}

func cTrainerRestore(t unsafe.Pointer, path string) error {
	cpath := cString(path)
	defer freeCString(cpath)
	var msg *C.char
	return errorFrom(C.nnrt_go_trainer_restore((*C.nnrt_trainer)(t), cpath, &msg), msg)
}

func cTrainerCancel(t unsafe.Pointer) error {
	var msg *C.char
	return errorFrom(C.nnrt_go_trainer_cancel((*C.nnrt_trainer)(t), &msg), msg)
}

func cTrainerRank(t unsafe.Pointer) (int, int, error) {
	var msg *C.char
	var rank, world C.int32_t
	if err := errorFrom(C.nnrt_go_trainer_rank((*C.nnrt_trainer)(t), &rank, &world, &msg), msg); err != nil {
		return 0, 0, err
	}
	return int(rank), int(world), nil
}

func cModelEvaluateEx(m, data, opts unsafe.Pointer) (unsafe.Pointer, error) {
	var out *C.nnrt_evaluation
	var msg *C.char
	st := C.nnrt_go_model_evaluate_ex((*C.nnrt_model)(m), (*C.nnrt_dataset)(data), (*C.nnrt_run_options)(opts), &out, &msg)
	if err := errorFrom(st, msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cRunOptionsCreate() (unsafe.Pointer, error) {
	var out *C.nnrt_run_options
	var msg *C.char
	if err := errorFrom(C.nnrt_go_run_options_create(&out, &msg), msg); err != nil {
		return nil, err
	}
	return unsafe.Pointer(out), nil
}

func cRunOptionsRelease(o unsafe.Pointer) { C.nnrt_run_options_release((*C.nnrt_run_options)(o)) }

func cRunOptionsCancel(o unsafe.Pointer) error {
	var msg *C.char
	return errorFrom(C.nnrt_go_run_options_cancel((*C.nnrt_run_options)(o), &msg), msg)
}

func cRunOptionsReset(o unsafe.Pointer) error {
	var msg *C.char
	return errorFrom(C.nnrt_go_run_options_reset((*C.nnrt_run_options)(o), &msg), msg)
}

func cRunOptionsSetTimeout(o unsafe.Pointer, seconds float64) error {
	var msg *C.char
	return errorFrom(C.nnrt_go_run_options_set_timeout((*C.nnrt_run_options)(o), C.double(seconds), &msg), msg)
}

func cEvaluationAccuracy(e unsafe.Pointer) (float64, error) {
	var acc C.double
	var msg *C.char
	if err := errorFrom(C.nnrt_go_evaluation_accuracy((*C.nnrt_evaluation)(e), &acc, &msg), msg); err != nil {
		return 0, err
	}
	return float64(acc), nil
}

func cEvaluationReport(e unsafe.Pointer) (string, error) {
	var out, msg *C.char
	if err := errorFrom(C.nnrt_go_nnrt_evaluation_report((*C.nnrt_evaluation)(e), &out, &msg), msg); err != nil {
		return "", err
	}
	return goStringFree(out), nil
}

func cEvaluationRelease(e unsafe.Pointer) { C.nnrt_evaluation_release((*C.nnrt_evaluation)(e)) }
