// The raw entry points of libnnrt, one [DllImport] per function of include/nnrt/nnrt.h.
//
// Mono 6.8 has no NativeLibrary, so the library is resolved by name: "nnrt" is mapped to the
// absolute path of libnnrt.so.1 by the Nnrt.dll.config that the build script writes next to
// Nnrt.dll (see README.md); without that file Mono searches the usual dlopen paths for libnnrt.so.
//
// Conventions used below:
//  - size_t is UIntPtr, int64_t long, int32_t int, uint32_t uint; enums are int-sized.
//  - Input strings are NUL-terminated UTF-8 byte[] made by Utf8.Encode (the marshaler pins a byte[]
//    for the duration of the call), never `string`, so no platform charset is ever involved.
//  - Returned `const char *` are IntPtr and decoded by Utf8.Decode: nnrt owns them, and a `string`
//    return type would make the marshaler free memory it does not own.
//  - Handles are SafeHandle subclasses: the marshaler adds a reference for the duration of the call,
//    so disposing an object on another thread never frees it under a running call.
//  - Every call runs on the calling thread (P/Invoke does not switch threads), which is what makes
//    reading the thread-local nnrt_last_error() right after a failed call correct.
using System;
using System.Runtime.InteropServices;

namespace Nnrt
{
    /// <summary>The C functions of libnnrt, exactly as the header declares them.</summary>
    internal static class Native
    {
        private const string Lib = "nnrt";

        /// <summary>nnrt_log_fn.</summary>
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void LogFn(int level, IntPtr message, IntPtr user);

        /// <summary>nnrt_progress_fn.</summary>
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate int ProgressFn(IntPtr progress, IntPtr user);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate int TokenFn(long token, IntPtr user);
        /// <summary>nnrt_release_fn.</summary>
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void ReleaseFn(IntPtr data, IntPtr user);
        /// <summary>nnrt_abort_fn.</summary>
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate int AbortFn(IntPtr user);

        // Version and errors
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern uint nnrt_abi_version();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr nnrt_version_string();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr nnrt_status_name(Status s);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr nnrt_last_error();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_set_log_callback(LogFn fn, IntPtr user, int minLevel);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern UIntPtr nnrt_dtype_size(DType t);

        // Context
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_context_create(byte[] optionsJson, out ContextHandle ctx);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_context_release(IntPtr ctx);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_context_describe(ContextHandle ctx, byte[] buf, UIntPtr cap, out UIntPtr len);

        // Arrays
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_array_create(ContextHandle ctx, DType dtype, int ndim, long[] shape,
                                                        out ArrayHandle array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_array_from_host(ContextHandle ctx, DType dtype, int ndim, long[] shape,
                                                           IntPtr data, UIntPtr nbytes, out ArrayHandle array);
        // strides: null for row-major. The binding lends memory for one call and releases the array
        // before unpinning it, so it passes no release callback (null).
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_array_wrap_host(ContextHandle ctx, DType dtype, int ndim, long[] shape,
                                                           long[] strides, IntPtr data, UIntPtr nbytes,
                                                           ReleaseFn release, IntPtr user, out ArrayHandle array);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_array_to_host(ArrayHandle a, IntPtr data, UIntPtr nbytes);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_array_info(ArrayHandle a, out DType dtype, out int ndim,
                                                      [Out] long[] shape);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_array_nbytes(ArrayHandle a, out UIntPtr nbytes);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_array_release(IntPtr a);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_op(ContextHandle ctx, byte[] name, IntPtr[] inputs, int nInputs,
                                              byte[] attrsJson, [Out] IntPtr[] outputs, int nOutputs);

        // Run options
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_run_options_create(out RunOptionsHandle o);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_run_options_release(IntPtr o);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_run_options_cancel(RunOptionsHandle o);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_run_options_reset(RunOptionsHandle o);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_run_options_set_timeout(RunOptionsHandle o, double seconds);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_run_options_set_abort_callback(RunOptionsHandle o, AbortFn fn, IntPtr user);

        // Models
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_create(ContextHandle ctx, byte[] configJson, out ModelHandle m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_load(ContextHandle ctx, byte[] path, out ModelHandle m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_load_ex(ContextHandle ctx, byte[] path, RunOptionsHandle options,
                                                         out ModelHandle m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_save(ModelHandle m, byte[] path);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_import_onnx(ContextHandle ctx, byte[] path, byte[] options, out ModelHandle m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_import_onnx_ex(ContextHandle ctx, byte[] path, byte[] options,
                                                                RunOptionsHandle runOptions, out ModelHandle m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_import_onnx_memory(ContextHandle ctx, byte[] data, UIntPtr nbytes,
                                                                    byte[] options, out ModelHandle m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_export_onnx(ModelHandle m, byte[] path);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_share(ModelHandle m, out ModelHandle output);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_quantize(ModelHandle m, DatasetHandle calibration, byte[] optionsJson,
                                                          out ModelHandle output);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_model_release(IntPtr m);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_predict(ModelHandle m, ArrayHandle input, out ArrayHandle output);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_predict_ex(ModelHandle m, ArrayHandle input, RunOptionsHandle options,
                                                            out ArrayHandle output);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_predict_into(ModelHandle m, ArrayHandle input, ArrayHandle output,
                                                              RunOptionsHandle options);
        // The same entry point with options == NULL: never stopped.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl, EntryPoint = "nnrt_model_predict_into")]
        internal static extern Status nnrt_model_predict_into_no_options(ModelHandle m, ArrayHandle input,
                                                                         ArrayHandle output, IntPtr options);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_output_shape(ModelHandle m, long batch, out int ndim, [Out] long[] shape);
        // inputs: raw array pointers, which the caller keeps referenced (DangerousAddRef) for the call;
        // outputs: filled with new arrays the caller owns, on success only.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_predict_many(ModelHandle m, IntPtr[] inputs, int nInputs,
                                                              RunOptionsHandle options, [Out] IntPtr[] outputs,
                                                              int nOutputs);
        // The same entry point with options == NULL: never stopped.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl, EntryPoint = "nnrt_model_predict_many")]
        internal static extern Status nnrt_model_predict_many_no_options(ModelHandle m, IntPtr[] inputs, int nInputs,
                                                                         IntPtr options, [Out] IntPtr[] outputs,
                                                                         int nOutputs);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_input_count(ModelHandle m, out int count);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_input(ModelHandle m, int index, byte[] buf, UIntPtr cap, out UIntPtr len,
                                                       out int ndim, [Out] long[] shape);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_output_count(ModelHandle m, out int count);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_generate(ModelHandle m, long[] prompt, UIntPtr promptLen, byte[] optionsJson,
                                                          long[] tokens, UIntPtr maxTokens, out UIntPtr nTokens,
                                                          TokenFn onToken, IntPtr user);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_summary(ModelHandle m, byte[] buf, UIntPtr cap, out UIntPtr len);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_param_count(ModelHandle m, out long count);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_get_param(ModelHandle m, byte[] name, out ArrayHandle value);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_set_param(ModelHandle m, byte[] name, ArrayHandle value);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_evaluate(ModelHandle m, DatasetHandle data, out EvaluationHandle e);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_model_evaluate_ex(ModelHandle m, DatasetHandle data, RunOptionsHandle options,
                                                             out EvaluationHandle e);

        // Datasets
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_dataset_from_arrays(ContextHandle ctx, ArrayHandle features,
                                                               ArrayHandle labels, out DatasetHandle d);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_dataset_load(ContextHandle ctx, byte[] specJson, out DatasetHandle d);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_dataset_size(DatasetHandle d, out long examples);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_dataset_examples(ContextHandle ctx, DatasetHandle d, long start, long count,
                                                            out ArrayHandle features, out ArrayHandle labels);
        // The same entry point with labels == NULL, which skips them.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl, EntryPoint = "nnrt_dataset_examples")]
        internal static extern Status nnrt_dataset_examples_no_labels(ContextHandle ctx, DatasetHandle d, long start,
                                                                      long count, out ArrayHandle features,
                                                                      IntPtr labels);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_dataset_release(IntPtr d);

        // Trainers
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_create(ModelHandle m, byte[] optionsJson, out TrainerHandle t);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_trainer_release(IntPtr t);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_set_progress(TrainerHandle t, ProgressFn fn, IntPtr user);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_step(TrainerHandle t, ArrayHandle x, ArrayHandle y, out double loss);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_fit(TrainerHandle t, DatasetHandle train, DatasetHandle validation,
                                                       int epochs);
        // The same entry point with validation == NULL: no validation after each epoch.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl, EntryPoint = "nnrt_trainer_fit")]
        internal static extern Status nnrt_trainer_fit_no_validation(TrainerHandle t, DatasetHandle train,
                                                                     IntPtr validation, int epochs);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_result(TrainerHandle t, byte[] buf, UIntPtr cap, out UIntPtr len);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_save(TrainerHandle t, byte[] path);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_restore(TrainerHandle t, byte[] path);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_cancel(TrainerHandle t);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_trainer_rank(TrainerHandle t, out int rank, out int worldSize);

        // Evaluation
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_evaluation_accuracy(EvaluationHandle e, out double accuracy);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern Status nnrt_evaluation_report(EvaluationHandle e, byte[] buf, UIntPtr cap,
                                                             out UIntPtr len);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void nnrt_evaluation_release(IntPtr e);
    }
}
