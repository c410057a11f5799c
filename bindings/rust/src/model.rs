//! [`Model`]: a network built from a JSON config, with its parameters.

use std::ffi::{c_int, c_void};
use std::fmt;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;
use std::ptr::NonNull;

use crate::array::Array;
use crate::context::{Context, non_null};
use crate::dataset::Dataset;
use crate::error::{Result, c_options, c_path, c_string, check, options_ptr};
use crate::evaluation::Evaluation;
use crate::sys;
use crate::text::read_string;

/// A network built from a JSON config, with its parameters (`nnrt_model`).
///
/// Models may be shared between threads (`Send + Sync`): [`predict`](Model::predict) runs from many
/// threads at once, also while a [`Trainer`](crate::Trainer) trains the model on another thread. A
/// model keeps its context alive, and a trainer keeps its model alive.
pub struct Model {
    raw: NonNull<sys::nnrt_model>,
}

// SAFETY: the C API states models may be shared between threads.
unsafe impl Send for Model {}
// SAFETY: as above; nnrt takes the model's own lock in every call that reads or writes parameters.
unsafe impl Sync for Model {}

impl Model {
    /// Builds a model from a JSON config on the context's backend, such as
    /// `{"input": [4], "layers": [{"type": "dense", "units": 8, "activation": "relu"},
    /// {"type": "output", "units": 3, "loss": "nll"}]}`. Layer kinds and keys are listed at
    /// `nnrt_model_create` in nnrt.h.
    pub fn new(ctx: &Context, config_json: &str) -> Result<Model> {
        let config = c_string("config_json", config_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: config is a valid C string; raw receives the new handle.
        check(unsafe { sys::nnrt_model_create(ctx.as_raw(), config.as_ptr(), &mut raw) })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_create")? })
    }

    /// Loads a model saved by [`save`](Model::save) or [`Trainer::save`](crate::Trainer::save) onto
    /// the context's backend. A damaged file is [`Status::Corrupt`](crate::Status::Corrupt), a missing
    /// one [`Status::Io`](crate::Status::Io).
    pub fn load(ctx: &Context, path: impl AsRef<Path>) -> Result<Model> {
        let path = c_path(path.as_ref())?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: path is a valid C string; raw receives the new handle.
        check(unsafe { sys::nnrt_model_load(ctx.as_raw(), path.as_ptr(), &mut raw) })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_load")? })
    }

    /// Imports an ONNX model (a `.onnx` file, opsets 7 to 17) as an nnrt graph model. `options_json`
    /// is `""` for the defaults or a JSON object: `"batch"` (true: ONNX dim 0 is the batch),
    /// `"batch_axis"` (another ONNX dim that is, e.g. 1 for a time-major `[T, N, F]` input),
    /// `"input"` (the example shape, for symbolic dims), `"loss"` (makes the final Gemm an output
    /// layer so that the model trains). An op nnrt cannot run is
    /// [`Status::Unsupported`](crate::Status::Unsupported) naming the node, op type and opset; a
    /// malformed file [`Status::Corrupt`](crate::Status::Corrupt).
    pub fn import_onnx(ctx: &Context, path: impl AsRef<Path>, options_json: &str) -> Result<Model> {
        let path = c_path(path.as_ref())?;
        let options = c_options("options_json", options_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: path and options are valid C strings (or NULL); raw receives the new handle.
        check(unsafe { sys::nnrt_model_import_onnx(ctx.as_raw(), path.as_ptr(), options_ptr(&options), &mut raw) })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_import_onnx")? })
    }

    /// As [`import_onnx`](Model::import_onnx), from the bytes of a `.onnx` file (tensors with
    /// external data need the file's folder and are refused).
    pub fn import_onnx_bytes(ctx: &Context, bytes: &[u8], options_json: &str) -> Result<Model> {
        let options = c_options("options_json", options_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: bytes is a live slice read only during the call; raw receives the new handle.
        check(unsafe {
            sys::nnrt_model_import_onnx_memory(
                ctx.as_raw(),
                bytes.as_ptr().cast(),
                bytes.len(),
                options_ptr(&options),
                &mut raw,
            )
        })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_import_onnx_memory")? })
    }

    /// Writes the model as ONNX (opset 17, parameters as initializers, a symbolic batch dim),
    /// atomically. A layer with no ONNX form here (lstm) is
    /// [`Status::Unsupported`](crate::Status::Unsupported).
    pub fn export_onnx(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        // SAFETY: the handle is live; path is a valid C string.
        check(unsafe { sys::nnrt_model_export_onnx(self.as_raw(), path.as_ptr()) })
    }

    /// Saves the config and parameters to one safetensors file, atomically (a crash mid-save leaves
    /// the previous file intact).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        // SAFETY: the handle is live; path is a valid C string.
        check(unsafe { sys::nnrt_model_save(self.as_raw(), path.as_ptr()) })
    }

    /// Runs the model on a batch shaped `[N, <input shape>]` and returns its first output as an F32
    /// array `[N, <output shape>]` (class probabilities for a softmax output).
    pub fn predict(&self, input: &Array) -> Result<Array> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: both handles are live; raw receives the new array.
        check(unsafe { sys::nnrt_model_predict(self.as_raw(), input.as_raw(), &mut raw) })?;
        Array::from_raw(raw).ok_or_else(|| null_output("nnrt_model_predict"))
    }

    /// Up to `max_tokens` tokens continuing `prompt` (token ids) with a token model such as a
    /// trained `examples/gpt.json`, using its key/value cache (`nnrt_model_generate`). Options as
    /// JSON (`""` for greedy): `temperature`, `top_k`, `seed`, `stop`, `when_full`, `cache`.
    pub fn generate(&self, prompt: &[i64], max_tokens: usize, options_json: &str) -> Result<Vec<i64>> {
        self.generate_with(prompt, max_tokens, options_json, |_| ControlFlow::Continue(()))
    }

    /// As [`generate`](Model::generate), calling `on_token` with each token as it is chosen;
    /// `ControlFlow::Break` stops generation after that token. A panic in `on_token` stops
    /// generation and resumes here.
    pub fn generate_with<F>(
        &self,
        prompt: &[i64],
        max_tokens: usize,
        options_json: &str,
        mut on_token: F,
    ) -> Result<Vec<i64>>
    where
        F: FnMut(i64) -> ControlFlow<()>,
    {
        struct Slot<'a> {
            callback: &'a mut dyn FnMut(i64) -> ControlFlow<()>,
            panic: Option<Box<dyn std::any::Any + Send>>,
        }
        unsafe extern "C" fn trampoline(token: i64, user: *mut c_void) -> c_int {
            // SAFETY: user is the Slot below, alive for the whole nnrt_model_generate call.
            let slot = unsafe { &mut *user.cast::<Slot>() };
            match catch_unwind(AssertUnwindSafe(|| (slot.callback)(token))) {
                Ok(ControlFlow::Continue(())) => 0,
                Ok(ControlFlow::Break(())) => 1,
                Err(panic) => {
                    slot.panic = Some(panic);
                    1
                }
            }
        }
        let options = c_options("options_json", options_json)?;
        let mut slot = Slot { callback: &mut on_token, panic: None };
        let mut tokens = vec![0i64; max_tokens];
        let mut written = 0usize;
        // SAFETY: the handle is live; prompt and tokens hold prompt.len() and max_tokens ids; slot
        // outlives the call, which alone calls the trampoline.
        let status = unsafe {
            sys::nnrt_model_generate(
                self.as_raw(),
                prompt.as_ptr(),
                prompt.len(),
                options_ptr(&options),
                tokens.as_mut_ptr(),
                max_tokens,
                &mut written,
                Some(trampoline),
                (&mut slot as *mut Slot).cast(),
            )
        };
        if let Some(panic) = slot.panic.take() {
            resume_unwind(panic);
        }
        check(status)?;
        tokens.truncate(written);
        Ok(tokens)
    }

    /// The model as JSON: layers with output shapes, parameter counts and which backend ran each op,
    /// and the total parameter count.
    pub fn summary(&self) -> Result<String> {
        // SAFETY: the handle is live and the closure passes read_string's buffer through.
        read_string(|buf, cap, len| unsafe { sys::nnrt_model_summary(self.as_raw(), buf, cap, len) })
    }

    /// The number of parameters (elements of every weight, bias and statistic).
    pub fn param_count(&self) -> Result<i64> {
        let mut count = 0;
        // SAFETY: the handle is live; count is a valid out-parameter.
        check(unsafe { sys::nnrt_model_param_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// A copy of the parameter `name` (such as `"layer0.weight"`, in PyTorch's layout) as an F32
    /// array. An unknown name is [`Status::InvalidArgument`](crate::Status::InvalidArgument), and the
    /// message lists the model's parameter names.
    pub fn param(&self, name: &str) -> Result<Array> {
        let name = c_string("parameter name", name)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the handle is live; name is a valid C string; raw receives the new array.
        check(unsafe { sys::nnrt_model_get_param(self.as_raw(), name.as_ptr(), &mut raw) })?;
        Array::from_raw(raw).ok_or_else(|| null_output("nnrt_model_get_param"))
    }

    /// Copies `value` into the parameter `name`; it must have the parameter's shape, and a float
    /// value of another dtype is converted. Takes `&self` because nnrt locks the model itself, so
    /// other threads may keep predicting.
    pub fn set_param(&self, name: &str, value: &Array) -> Result<()> {
        let name = c_string("parameter name", name)?;
        // SAFETY: both handles are live; name is a valid C string.
        check(unsafe { sys::nnrt_model_set_param(self.as_raw(), name.as_ptr(), value.as_raw()) })
    }

    /// Evaluates the model on every example of `data`: accuracy and per-class metrics for class
    /// labels, MSE, MAE and R² for float targets.
    pub fn evaluate(&self, data: &Dataset) -> Result<Evaluation> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: both handles are live; raw receives the new evaluation.
        check(unsafe { sys::nnrt_model_evaluate(self.as_raw(), data.as_raw(), &mut raw) })?;
        Ok(Evaluation::from_raw(non_null(raw, "nnrt_model_evaluate")?))
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Model`.
    pub fn as_raw(&self) -> *mut sys::nnrt_model {
        self.raw.as_ptr()
    }
}

fn null_output(call: &str) -> crate::Error {
    crate::Error::new(crate::Status::Internal, format!("{call} returned NNRT_OK but no array"))
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once; trainers hold their own reference.
        unsafe { sys::nnrt_model_release(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model").field("raw", &self.raw).finish()
    }
}
