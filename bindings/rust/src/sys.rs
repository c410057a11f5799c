//! The raw C API of `include/nnrt/nnrt.h`, declared by hand, one item per C item and in the same
//! order. Everything here is `unsafe` to call; the rest of the crate wraps it. Read the header for
//! what each function does: these declarations only restate the types.
//!
//! C enums are passed as `i32` (`nnrt_status`, `nnrt_dtype`): the library may return a value this
//! binding does not know yet (the header appends new ones), and a Rust enum holding an unknown value
//! would be undefined behaviour.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};
use std::marker::{PhantomData, PhantomPinned};

/// `NNRT_VERSION_MAJOR` of the header this binding was written against.
pub const NNRT_VERSION_MAJOR: u32 = 0;
/// `NNRT_VERSION_MINOR` of the header this binding was written against.
pub const NNRT_VERSION_MINOR: u32 = 1;
/// `NNRT_VERSION_PATCH` of the header this binding was written against.
pub const NNRT_VERSION_PATCH: u32 = 0;
/// `NNRT_ABI_VERSION`: the soname major the binding expects.
pub const NNRT_ABI_VERSION: u32 = 1;
/// The largest rank of an array.
pub const NNRT_MAX_DIMS: usize = 8;

/// `nnrt_status`: 0 is `NNRT_OK`; see the `NNRT_ERR_*` constants.
pub type nnrt_status = c_int;
/// Success.
pub const NNRT_OK: nnrt_status = 0;
/// NULL where not allowed, bad value, unknown JSON key, wrong handle.
pub const NNRT_ERR_INVALID_ARGUMENT: nnrt_status = 1;
/// Out of memory.
pub const NNRT_ERR_OUT_OF_MEMORY: nnrt_status = 2;
/// Shapes do not fit together.
pub const NNRT_ERR_SHAPE: nnrt_status = 3;
/// A dtype the operation does not accept.
pub const NNRT_ERR_DTYPE: nnrt_status = 4;
/// A valid request this build or backend cannot do.
pub const NNRT_ERR_UNSUPPORTED: nnrt_status = 5;
/// A backend failed to load or failed at run time.
pub const NNRT_ERR_BACKEND: nnrt_status = 6;
/// The requested device does not exist here.
pub const NNRT_ERR_NO_DEVICE: nnrt_status = 7;
/// A file could not be opened, read or written.
pub const NNRT_ERR_IO: nnrt_status = 8;
/// A file or buffer is malformed, truncated or fails its checksum.
pub const NNRT_ERR_CORRUPT: nnrt_status = 9;
/// A file or plugin from an incompatible version.
pub const NNRT_ERR_VERSION: nnrt_status = 10;
/// Stopped by `nnrt_trainer_cancel`, `nnrt_run_options_cancel` or an abort callback.
pub const NNRT_ERR_CANCELLED: nnrt_status = 11;
/// A bug in nnrt.
pub const NNRT_ERR_INTERNAL: nnrt_status = 12;
/// A call ran past its run options' timeout.
pub const NNRT_ERR_DEADLINE_EXCEEDED: nnrt_status = 13;

/// Log level: debug.
pub const NNRT_LOG_DEBUG: c_int = 0;
/// Log level: info.
pub const NNRT_LOG_INFO: c_int = 1;
/// Log level: warnings.
pub const NNRT_LOG_WARN: c_int = 2;
/// Log level: errors.
pub const NNRT_LOG_ERROR: c_int = 3;

/// `nnrt_log_fn`: level, message (valid during the call), user pointer.
pub type nnrt_log_fn = Option<unsafe extern "C" fn(level: c_int, message: *const c_char, user: *mut c_void)>;

/// Declares an opaque C struct that Rust can only point at: unsized in spirit, not Send, not Sync,
/// not Unpin, so the safe wrappers decide those properties deliberately.
macro_rules! opaque {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}

opaque! {
    /// Backend, device, threads, memory cache.
    nnrt_context,
    /// A typed n-dimensional array on the context's device.
    nnrt_array,
    /// Examples and labels in host memory.
    nnrt_dataset,
    /// A network built from a JSON config, with its parameters.
    nnrt_model,
    /// An optimizer, its state and the training loop.
    nnrt_trainer,
    /// Metrics of a model on a dataset.
    nnrt_evaluation,
    /// Cancellation and a timeout for calls that run long.
    nnrt_run_options,
}

/// `nnrt_dtype`: see the `NNRT_DTYPE_*` constants.
pub type nnrt_dtype = c_int;
/// 32-bit float.
pub const NNRT_DTYPE_F32: nnrt_dtype = 1;
/// 64-bit float.
pub const NNRT_DTYPE_F64: nnrt_dtype = 2;
/// IEEE 754 binary16.
pub const NNRT_DTYPE_F16: nnrt_dtype = 3;
/// bfloat16.
pub const NNRT_DTYPE_BF16: nnrt_dtype = 4;
/// 32-bit signed integer.
pub const NNRT_DTYPE_I32: nnrt_dtype = 5;
/// 64-bit signed integer.
pub const NNRT_DTYPE_I64: nnrt_dtype = 6;
/// 8-bit unsigned integer.
pub const NNRT_DTYPE_U8: nnrt_dtype = 7;
/// One byte, 0 or 1.
pub const NNRT_DTYPE_BOOL: nnrt_dtype = 8;
/// 8-bit signed integer: quantized weights (nnrt_model_quantize); copied, not computed on.
pub const NNRT_DTYPE_I8: nnrt_dtype = 9;

/// What the progress callback receives; members after `validation_score` were added later, so
/// readers check `struct_size` before reading them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nnrt_progress {
    /// Size of the struct the library filled in.
    pub struct_size: u32,
    /// 0-based epoch.
    pub epoch: i32,
    /// Minibatches so far, over all epochs.
    pub iteration: i64,
    /// Examples so far, over all epochs.
    pub examples_seen: i64,
    /// Loss of the last minibatch.
    pub loss: f64,
    /// Learning rate used for the last minibatch.
    pub learning_rate: f64,
    /// Throughput over the current epoch so far.
    pub examples_per_second: f64,
    /// 1 on the call after an epoch.
    pub epoch_end: i32,
    /// The validation metric after an epoch; NaN when none.
    pub validation_score: f64,
    /// Minibatches in one epoch.
    pub batches_per_epoch: i64,
    /// 0-based minibatch within the epoch.
    pub batch: i64,
    /// The training device's utilization in percent; -1 when unknown (always on a CPU).
    pub device_utilization_percent: i32,
    /// The training device's temperature; -1 when unknown.
    pub device_temperature_celsius: i32,
    /// Memory in use on the training device, by every process; -1 when unknown.
    pub device_memory_used_bytes: i64,
    /// The training device's memory; -1 when unknown.
    pub device_memory_total_bytes: i64,
}

// The layout gcc gives nnrt_progress on the 64-bit targets nnrt builds for (checked against
// offsetof); a mismatch would silently garble every progress report, so it stops the build.
const _: () = {
    assert!(std::mem::offset_of!(nnrt_progress, loss) == 24);
    assert!(std::mem::offset_of!(nnrt_progress, epoch_end) == 48);
    assert!(std::mem::offset_of!(nnrt_progress, validation_score) == 56);
    assert!(std::mem::offset_of!(nnrt_progress, batch) == 72);
    assert!(std::mem::offset_of!(nnrt_progress, device_utilization_percent) == 80);
    assert!(std::mem::offset_of!(nnrt_progress, device_memory_used_bytes) == 88);
    assert!(std::mem::size_of::<nnrt_progress>() == 104);
};

/// `nnrt_release_fn`: called once when nnrt no longer uses memory lent with `nnrt_array_wrap_host`.
pub type nnrt_release_fn = Option<unsafe extern "C" fn(data: *mut c_void, user: *mut c_void)>;

/// `nnrt_abort_fn`: asked before each op and stage of a call run with the options; nonzero stops it.
pub type nnrt_abort_fn = Option<unsafe extern "C" fn(user: *mut c_void) -> c_int>;

/// `nnrt_token_fn`: sees each generated token; nonzero stops generation.
pub type nnrt_token_fn = Option<unsafe extern "C" fn(token: i64, user: *mut c_void) -> c_int>;

/// `nnrt_progress_fn`: nonzero stops training.
pub type nnrt_progress_fn = Option<unsafe extern "C" fn(p: *const nnrt_progress, user: *mut c_void) -> c_int>;

// build.rs passes -lnnrt (and the folder it found the library in) to the linker.
unsafe extern "C" {
    // Version and errors.
    /// The NNRT_ABI_VERSION the library was built with.
    pub fn nnrt_abi_version() -> u32;
    /// The library version, "MAJOR.MINOR.PATCH"; static, never NULL.
    pub fn nnrt_version_string() -> *const c_char;
    /// The name of a status ("NNRT_ERR_SHAPE"); static, never NULL.
    pub fn nnrt_status_name(s: nnrt_status) -> *const c_char;
    /// This thread's last failure message; valid until the next nnrt call on this thread.
    pub fn nnrt_last_error() -> *const c_char;
    /// Sends log messages of level >= min_level to fn (NULL: back to stderr).
    pub fn nnrt_set_log_callback(fn_: nnrt_log_fn, user: *mut c_void, min_level: c_int);

    // Dtypes.
    /// The size of one element of t, or 0 for an unknown dtype.
    pub fn nnrt_dtype_size(t: nnrt_dtype) -> usize;

    // Context.
    /// Creates a context from JSON options (NULL for the defaults).
    pub fn nnrt_context_create(options_json: *const c_char, out: *mut *mut nnrt_context) -> nnrt_status;
    /// Releases the caller's reference to a context; NULL does nothing.
    pub fn nnrt_context_release(ctx: *mut nnrt_context);
    /// The context as JSON, into (buf, cap, len).
    pub fn nnrt_context_describe(ctx: *mut nnrt_context, buf: *mut c_char, cap: usize, len: *mut usize) -> nnrt_status;

    // Arrays.
    /// Creates a zero-filled array.
    pub fn nnrt_array_create(
        ctx: *mut nnrt_context,
        dtype: nnrt_dtype,
        ndim: i32,
        shape: *const i64,
        out: *mut *mut nnrt_array,
    ) -> nnrt_status;
    /// Creates an array holding a copy of nbytes of host data.
    pub fn nnrt_array_from_host(
        ctx: *mut nnrt_context,
        dtype: nnrt_dtype,
        ndim: i32,
        shape: *const i64,
        data: *const c_void,
        nbytes: usize,
        out: *mut *mut nnrt_array,
    ) -> nnrt_status;
    /// Makes an array of the caller's host memory, without copying; release(data, user) is called
    /// once nnrt no longer uses it. NNRT_ERR_UNSUPPORTED on a backend whose arrays are not in host
    /// memory.
    pub fn nnrt_array_wrap_host(
        ctx: *mut nnrt_context,
        dtype: nnrt_dtype,
        ndim: i32,
        shape: *const i64,
        strides: *const i64,
        data: *mut c_void,
        nbytes: usize,
        release: nnrt_release_fn,
        user: *mut c_void,
        out: *mut *mut nnrt_array,
    ) -> nnrt_status;
    /// Copies an array's elements into exactly nbytes of host memory.
    pub fn nnrt_array_to_host(a: *const nnrt_array, data: *mut c_void, nbytes: usize) -> nnrt_status;
    /// Reads an array's dtype, rank and shape (room for NNRT_MAX_DIMS); any may be NULL.
    pub fn nnrt_array_info(
        a: *const nnrt_array,
        dtype: *mut nnrt_dtype,
        ndim: *mut i32,
        shape: *mut i64,
    ) -> nnrt_status;
    /// Reads an array's size in bytes.
    pub fn nnrt_array_nbytes(a: *const nnrt_array, nbytes: *mut usize) -> nnrt_status;
    /// Releases the caller's reference to an array; NULL does nothing.
    pub fn nnrt_array_release(a: *mut nnrt_array);
    /// Runs the operation `name`, writing n_outputs new arrays.
    pub fn nnrt_op(
        ctx: *mut nnrt_context,
        name: *const c_char,
        inputs: *const *const nnrt_array,
        n_inputs: i32,
        attrs_json: *const c_char,
        outputs: *mut *mut nnrt_array,
        n_outputs: i32,
    ) -> nnrt_status;

    // Run options.
    /// Creates run options: not cancelled, no timeout, no abort callback.
    pub fn nnrt_run_options_create(out: *mut *mut nnrt_run_options) -> nnrt_status;
    /// Releases run options; no call may be running with them. NULL does nothing.
    pub fn nnrt_run_options_release(o: *mut nnrt_run_options);
    /// Cancels every running and later call with these options until reset; safe from any thread.
    pub fn nnrt_run_options_cancel(o: *mut nnrt_run_options) -> nnrt_status;
    /// Clears a cancellation.
    pub fn nnrt_run_options_reset(o: *mut nnrt_run_options) -> nnrt_status;
    /// Gives each call at most `seconds` (0 removes the limit).
    pub fn nnrt_run_options_set_timeout(o: *mut nnrt_run_options, seconds: f64) -> nnrt_status;
    /// Sets the abort callback (None removes it).
    pub fn nnrt_run_options_set_abort_callback(
        o: *mut nnrt_run_options,
        fn_: nnrt_abort_fn,
        user: *mut c_void,
    ) -> nnrt_status;

    // Models.
    /// Builds a model from a JSON config.
    pub fn nnrt_model_create(
        ctx: *mut nnrt_context,
        config_json: *const c_char,
        out: *mut *mut nnrt_model,
    ) -> nnrt_status;
    /// Loads a model saved by nnrt_model_save or nnrt_trainer_save.
    pub fn nnrt_model_load(ctx: *mut nnrt_context, path: *const c_char, out: *mut *mut nnrt_model) -> nnrt_status;
    /// As nnrt_model_load, stopped early as options say (NULL: never).
    pub fn nnrt_model_load_ex(
        ctx: *mut nnrt_context,
        path: *const c_char,
        options: *const nnrt_run_options,
        out: *mut *mut nnrt_model,
    ) -> nnrt_status;
    /// Saves a model atomically as one safetensors file.
    pub fn nnrt_model_save(m: *const nnrt_model, path: *const c_char) -> nnrt_status;
    /// Imports an ONNX model file (options_json may be NULL).
    pub fn nnrt_model_import_onnx(
        ctx: *mut nnrt_context,
        path: *const c_char,
        options_json: *const c_char,
        out: *mut *mut nnrt_model,
    ) -> nnrt_status;
    /// As nnrt_model_import_onnx, stopped early as run_options say (NULL: never).
    pub fn nnrt_model_import_onnx_ex(
        ctx: *mut nnrt_context,
        path: *const c_char,
        options_json: *const c_char,
        run_options: *const nnrt_run_options,
        out: *mut *mut nnrt_model,
    ) -> nnrt_status;
    /// Imports an ONNX model from memory.
    pub fn nnrt_model_import_onnx_memory(
        ctx: *mut nnrt_context,
        data: *const c_void,
        nbytes: usize,
        options_json: *const c_char,
        out: *mut *mut nnrt_model,
    ) -> nnrt_status;
    /// Exports a model as ONNX (opset 17), atomically.
    pub fn nnrt_model_export_onnx(m: *const nnrt_model, path: *const c_char) -> nnrt_status;
    /// Makes another model that shares m's parameters (copied on write).
    pub fn nnrt_model_share(m: *const nnrt_model, out: *mut *mut nnrt_model) -> nnrt_status;
    /// Makes an int8 copy of m for inference, calibrated on a dataset (options_json may be NULL).
    pub fn nnrt_model_quantize(
        m: *mut nnrt_model,
        calibration: *mut nnrt_dataset,
        options_json: *const c_char,
        out: *mut *mut nnrt_model,
    ) -> nnrt_status;
    /// Releases the caller's reference to a model; NULL does nothing.
    pub fn nnrt_model_release(m: *mut nnrt_model);
    /// Runs the model on a batch; thread-safe.
    pub fn nnrt_model_predict(
        m: *mut nnrt_model,
        input: *const nnrt_array,
        output: *mut *mut nnrt_array,
    ) -> nnrt_status;
    /// As nnrt_model_predict, stopped early as options say (NULL: never).
    pub fn nnrt_model_predict_ex(
        m: *mut nnrt_model,
        input: *const nnrt_array,
        options: *const nnrt_run_options,
        output: *mut *mut nnrt_array,
    ) -> nnrt_status;
    /// Writes the prediction into a caller-made F32 output array; keeps no reference to either.
    pub fn nnrt_model_predict_into(
        m: *mut nnrt_model,
        input: *const nnrt_array,
        output: *mut nnrt_array,
        options: *const nnrt_run_options,
    ) -> nnrt_status;
    /// The prediction's shape for a batch (room for NNRT_MAX_DIMS entries).
    pub fn nnrt_model_output_shape(m: *const nnrt_model, batch: i64, ndim: *mut i32, shape: *mut i64) -> nnrt_status;
    /// Runs a model of one or several inputs; writes its first n_outputs outputs.
    pub fn nnrt_model_predict_many(
        m: *mut nnrt_model,
        inputs: *const *const nnrt_array,
        n_inputs: i32,
        options: *const nnrt_run_options,
        outputs: *mut *mut nnrt_array,
        n_outputs: i32,
    ) -> nnrt_status;
    /// How many inputs the model takes.
    pub fn nnrt_model_input_count(m: *const nnrt_model, count: *mut i32) -> nnrt_status;
    /// Input `index`'s name (string convention) and one example's shape (room for NNRT_MAX_DIMS).
    pub fn nnrt_model_input(
        m: *const nnrt_model,
        index: i32,
        buf: *mut c_char,
        cap: usize,
        len: *mut usize,
        ndim: *mut i32,
        shape: *mut i64,
    ) -> nnrt_status;
    /// How many outputs the model gives.
    pub fn nnrt_model_output_count(m: *const nnrt_model, count: *mut i32) -> nnrt_status;
    /// Generates up to max_tokens tokens continuing prompt into tokens; on_token may be None.
    pub fn nnrt_model_generate(
        m: *mut nnrt_model,
        prompt: *const i64,
        prompt_len: usize,
        options_json: *const c_char,
        tokens: *mut i64,
        max_tokens: usize,
        n_tokens: *mut usize,
        on_token: nnrt_token_fn,
        user: *mut c_void,
    ) -> nnrt_status;
    /// The model as JSON, into (buf, cap, len).
    pub fn nnrt_model_summary(m: *const nnrt_model, buf: *mut c_char, cap: usize, len: *mut usize) -> nnrt_status;
    /// Reads the number of parameter elements.
    pub fn nnrt_model_param_count(m: *const nnrt_model, count: *mut i64) -> nnrt_status;
    /// A copy of a parameter as a new F32 array.
    pub fn nnrt_model_get_param(m: *const nnrt_model, name: *const c_char, out: *mut *mut nnrt_array) -> nnrt_status;
    /// Copies a value into a parameter.
    pub fn nnrt_model_set_param(m: *mut nnrt_model, name: *const c_char, value: *const nnrt_array) -> nnrt_status;
    /// Evaluates the model on a dataset.
    pub fn nnrt_model_evaluate(
        m: *mut nnrt_model,
        data: *mut nnrt_dataset,
        out: *mut *mut nnrt_evaluation,
    ) -> nnrt_status;

    /// As nnrt_model_evaluate, stopped early as options say (NULL: never).
    pub fn nnrt_model_evaluate_ex(
        m: *mut nnrt_model,
        data: *mut nnrt_dataset,
        options: *const nnrt_run_options,
        out: *mut *mut nnrt_evaluation,
    ) -> nnrt_status;

    // Datasets.
    /// Makes a dataset from features `[N, ...]` and labels `[N]` or `[N, ...]`.
    pub fn nnrt_dataset_from_arrays(
        ctx: *mut nnrt_context,
        features: *const nnrt_array,
        labels: *const nnrt_array,
        out: *mut *mut nnrt_dataset,
    ) -> nnrt_status;
    /// Loads a dataset described by a JSON spec (IDX or CSV).
    pub fn nnrt_dataset_load(
        ctx: *mut nnrt_context,
        spec_json: *const c_char,
        out: *mut *mut nnrt_dataset,
    ) -> nnrt_status;
    /// Reads the number of examples.
    pub fn nnrt_dataset_size(d: *const nnrt_dataset, examples: *mut i64) -> nnrt_status;
    /// Copies examples [start, start + count) into new arrays; labels may be NULL.
    pub fn nnrt_dataset_examples(
        ctx: *mut nnrt_context,
        d: *const nnrt_dataset,
        start: i64,
        count: i64,
        features: *mut *mut nnrt_array,
        labels: *mut *mut nnrt_array,
    ) -> nnrt_status;
    /// Releases the caller's reference to a dataset; NULL does nothing.
    pub fn nnrt_dataset_release(d: *mut nnrt_dataset);

    // Trainers.
    /// Creates a trainer for a model from JSON options (NULL for the defaults).
    pub fn nnrt_trainer_create(
        m: *mut nnrt_model,
        options_json: *const c_char,
        out: *mut *mut nnrt_trainer,
    ) -> nnrt_status;
    /// Releases a trainer; must not race with a running fit.
    pub fn nnrt_trainer_release(t: *mut nnrt_trainer);
    /// Sets the progress callback (NULL to remove it).
    pub fn nnrt_trainer_set_progress(t: *mut nnrt_trainer, fn_: nnrt_progress_fn, user: *mut c_void) -> nnrt_status;
    /// One optimisation step on a minibatch; loss may be NULL.
    pub fn nnrt_trainer_step(
        t: *mut nnrt_trainer,
        x: *const nnrt_array,
        y: *const nnrt_array,
        loss: *mut f64,
    ) -> nnrt_status;
    /// Trains for `epochs` passes; validation may be NULL.
    pub fn nnrt_trainer_fit(
        t: *mut nnrt_trainer,
        train: *mut nnrt_dataset,
        validation: *mut nnrt_dataset,
        epochs: i32,
    ) -> nnrt_status;
    /// The last fit as JSON, into (buf, cap, len).
    pub fn nnrt_trainer_result(t: *const nnrt_trainer, buf: *mut c_char, cap: usize, len: *mut usize) -> nnrt_status;
    /// Saves the model and the training state atomically.
    pub fn nnrt_trainer_save(t: *const nnrt_trainer, path: *const c_char) -> nnrt_status;
    /// Restores parameters and training state saved by nnrt_trainer_save.
    pub fn nnrt_trainer_restore(t: *mut nnrt_trainer, path: *const c_char) -> nnrt_status;
    /// Asks a running (or the next) fit to stop; safe from any thread.
    pub fn nnrt_trainer_cancel(t: *mut nnrt_trainer) -> nnrt_status;
    /// This process's rank and the world size in distributed training (0 and 1 without it).
    pub fn nnrt_trainer_rank(t: *const nnrt_trainer, rank: *mut i32, world_size: *mut i32) -> nnrt_status;

    // Evaluation.
    /// Reads the accuracy (NaN for a regression evaluation).
    pub fn nnrt_evaluation_accuracy(e: *const nnrt_evaluation, accuracy: *mut f64) -> nnrt_status;
    /// The evaluation as JSON, into (buf, cap, len).
    pub fn nnrt_evaluation_report(
        e: *const nnrt_evaluation,
        buf: *mut c_char,
        cap: usize,
        len: *mut usize,
    ) -> nnrt_status;
    /// Releases an evaluation; NULL does nothing.
    pub fn nnrt_evaluation_release(e: *mut nnrt_evaluation);
}
