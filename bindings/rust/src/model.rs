//! [`Model`]: a network built from a JSON config, with its parameters.

use std::ffi::{c_int, c_void};
use std::fmt;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::array::Array;
use crate::context::{Context, ContextHandle, non_null};
use crate::dataset::Dataset;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result, Status, c_options, c_path, c_string, check, options_ptr};
use crate::evaluation::Evaluation;
use crate::run_options::{RunOptions, resume_abort_panic, run_options_ptr};
use crate::sys;
use crate::text::read_string;

/// A network built from a JSON config, with its parameters (`nnrt_model`).
///
/// Models may be shared between threads (`Send + Sync`): [`predict`](Model::predict) runs from many
/// threads at once, also while a [`Trainer`](crate::Trainer) trains the model on another thread. A
/// model keeps its context alive, and a trainer keeps its model alive.
pub struct Model {
    raw: NonNull<sys::nnrt_model>,
    /// The context the model was made on: [`predict_into`](Model::predict_into) lends Rust memory to
    /// nnrt as arrays of this context, which has the model's backend and device.
    ctx: Arc<ContextHandle>,
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
        Ok(Model { raw: non_null(raw, "nnrt_model_create")?, ctx: ctx.shared() })
    }

    /// Loads a model saved by [`save`](Model::save) or [`Trainer::save`](crate::Trainer::save) onto
    /// the context's backend. A damaged file is [`Status::Corrupt`](crate::Status::Corrupt), a missing
    /// one [`Status::Io`](crate::Status::Io).
    pub fn load(ctx: &Context, path: impl AsRef<Path>) -> Result<Model> {
        let path = c_path(path.as_ref())?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: path is a valid C string; raw receives the new handle.
        check(unsafe { sys::nnrt_model_load(ctx.as_raw(), path.as_ptr(), &mut raw) })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_load")?, ctx: ctx.shared() })
    }

    /// As [`load`](Model::load), stopped early as `options` say: cancelled or past its timeout
    /// before reading, after reading and checking, after building, or before a parameter's upload,
    /// it returns [`Status::Cancelled`] or [`Status::DeadlineExceeded`] and makes no model.
    pub fn load_with(ctx: &Context, path: impl AsRef<Path>, options: &RunOptions) -> Result<Model> {
        let path = c_path(path.as_ref())?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: path is a valid C string; options is live for the call; raw receives the handle.
        let status =
            unsafe { sys::nnrt_model_load_ex(ctx.as_raw(), path.as_ptr(), run_options_ptr(Some(options)), &mut raw) };
        let outcome = check(status);
        resume_abort_panic();
        outcome?;
        Ok(Model { raw: non_null(raw, "nnrt_model_load_ex")?, ctx: ctx.shared() })
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
        Ok(Model { raw: non_null(raw, "nnrt_model_import_onnx")?, ctx: ctx.shared() })
    }

    /// As [`import_onnx`](Model::import_onnx), stopped early as `run_options` say (checked before and
    /// after the converter parses and converts the file, after the model is built and before each
    /// parameter's upload): [`Status::Cancelled`] or [`Status::DeadlineExceeded`], and no model.
    pub fn import_onnx_with(
        ctx: &Context,
        path: impl AsRef<Path>,
        options_json: &str,
        run_options: &RunOptions,
    ) -> Result<Model> {
        let path = c_path(path.as_ref())?;
        let options = c_options("options_json", options_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: path and options are valid C strings (or NULL); run_options is live for the call;
        // raw receives the new handle.
        let status = unsafe {
            sys::nnrt_model_import_onnx_ex(
                ctx.as_raw(),
                path.as_ptr(),
                options_ptr(&options),
                run_options_ptr(Some(run_options)),
                &mut raw,
            )
        };
        let outcome = check(status);
        resume_abort_panic();
        outcome?;
        Ok(Model { raw: non_null(raw, "nnrt_model_import_onnx_ex")?, ctx: ctx.shared() })
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
        Ok(Model { raw: non_null(raw, "nnrt_model_import_onnx_memory")?, ctx: ctx.shared() })
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

    /// As [`predict`](Model::predict), stopped early as `options` say: [`Status::Cancelled`] after
    /// [`RunOptions::cancel`] (until [`RunOptions::reset`]), [`Status::DeadlineExceeded`] past its
    /// timeout. A stopped call gives no output and leaves the model usable at once.
    pub fn predict_with(&self, input: &Array, options: &RunOptions) -> Result<Array> {
        self.predict_ex(input, Some(options))
    }

    fn predict_ex(&self, input: &Array, options: Option<&RunOptions>) -> Result<Array> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: both handles are live, and the options (or NULL) for the call; raw receives the
        // new array.
        let status =
            unsafe { sys::nnrt_model_predict_ex(self.as_raw(), input.as_raw(), run_options_ptr(options), &mut raw) };
        let outcome = check(status);
        resume_abort_panic();
        outcome?;
        Array::from_raw(raw).ok_or_else(|| null_output("nnrt_model_predict_ex"))
    }

    /// Runs a model of one or several inputs (a config's `"inputs"`; see
    /// [`inputs`](Model::inputs)) on one batch per input, each `[N, <that input's shape>]` with the
    /// same `N`, and returns every output (the config's `"outputs"` order) as F32 arrays. Otherwise
    /// as [`predict`](Model::predict): thread-safe, planned per layout of the inputs.
    pub fn predict_many(&self, inputs: &[&Array]) -> Result<Vec<Array>> {
        self.predict_many_ex(inputs, None)
    }

    /// As [`predict_many`](Model::predict_many), stopped early as `options` say
    /// ([`Status::Cancelled`], [`Status::DeadlineExceeded`]).
    pub fn predict_many_with(&self, inputs: &[&Array], options: &RunOptions) -> Result<Vec<Array>> {
        self.predict_many_ex(inputs, Some(options))
    }

    fn predict_many_ex(&self, inputs: &[&Array], options: Option<&RunOptions>) -> Result<Vec<Array>> {
        let count = self.output_count()?;
        let raw_inputs: Vec<*const sys::nnrt_array> = inputs.iter().map(|a| a.as_raw() as *const _).collect();
        let n_inputs = i32::try_from(raw_inputs.len())
            .map_err(|_| Error::new(Status::InvalidArgument, "more inputs than an i32 counts"))?;
        let mut raw = vec![std::ptr::null_mut(); count];
        // SAFETY: the model and every input handle are live for the call; raw has room for the
        // `count` outputs asked for (count >= 1: a model has at least one output).
        let status = unsafe {
            sys::nnrt_model_predict_many(
                self.as_raw(),
                raw_inputs.as_ptr(),
                n_inputs,
                run_options_ptr(options),
                raw.as_mut_ptr(),
                count as i32,
            )
        };
        let outcome = check(status);
        resume_abort_panic();
        outcome?;
        raw.into_iter()
            .map(|r| Array::from_raw(r).ok_or_else(|| null_output("nnrt_model_predict_many")))
            .collect()
    }

    /// Each input's name and the shape of one example, in the order
    /// [`predict_many`](Model::predict_many) takes them: `[("input", <the config's "input">)]` for a
    /// model of one input.
    pub fn inputs(&self) -> Result<Vec<(String, Vec<i64>)>> {
        let mut count = 0i32;
        // SAFETY: the handle is live; count receives the number.
        check(unsafe { sys::nnrt_model_input_count(self.as_raw(), &mut count) })?;
        (0..count)
            .map(|k| {
                let mut ndim = 0i32;
                let mut shape = [0i64; sys::NNRT_MAX_DIMS];
                // SAFETY: the handle is live, k is in range, shape has room for NNRT_MAX_DIMS entries
                // and the closure passes read_string's buffer through.
                let name = read_string(|buf, cap, len| unsafe {
                    sys::nnrt_model_input(self.as_raw(), k, buf, cap, len, &mut ndim, shape.as_mut_ptr())
                })?;
                let ndim = usize::try_from(ndim).unwrap_or(0).min(sys::NNRT_MAX_DIMS);
                Ok((name, shape[..ndim].to_vec()))
            })
            .collect()
    }

    /// How many outputs the model gives (its config's `"outputs"`).
    pub fn output_count(&self) -> Result<usize> {
        let mut count = 0i32;
        // SAFETY: the handle is live; count receives the number.
        check(unsafe { sys::nnrt_model_output_count(self.as_raw(), &mut count) })?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// The shape of the prediction for a batch of `batch` examples: `[batch, <output shape>]`.
    pub fn output_shape(&self, batch: i64) -> Result<Vec<i64>> {
        let mut ndim = 0i32;
        let mut shape = [0i64; sys::NNRT_MAX_DIMS];
        // SAFETY: the handle is live; shape has room for NNRT_MAX_DIMS entries, as the C API requires.
        check(unsafe { sys::nnrt_model_output_shape(self.as_raw(), batch, &mut ndim, shape.as_mut_ptr()) })?;
        let ndim = usize::try_from(ndim).unwrap_or(0).min(sys::NNRT_MAX_DIMS);
        Ok(shape[..ndim].to_vec())
    }

    /// Runs the model on a batch held in Rust memory and writes the prediction into `output`,
    /// without copying either: `input` holds the row-major elements of an array of `input_shape`
    /// (`[N, <input shape>]`, any [`Element`] type nnrt predicts from), and `output` exactly the
    /// elements of [`output_shape(N)`](Model::output_shape). nnrt reads and writes the slices in
    /// place for the length of this call only (`nnrt_array_wrap_host`, `nnrt_model_predict_into`);
    /// it keeps nothing once the call returns, so the caller may change `input` and call again.
    ///
    /// On a backend whose arrays are not in host memory (a GPU), the input is copied to the device
    /// and the prediction back instead, with the same result. On failure the contents of `output`
    /// are unspecified.
    ///
    /// ```
    /// # fn main() -> nnrt::Result<()> {
    /// let ctx = nnrt::Context::with_options(r#"{"threads": 1}"#)?;
    /// let model = nnrt::Model::new(&ctx, r#"{"input": [2], "layers": [{"type": "output", "units": 3, "loss": "nll"}]}"#)?;
    /// let input = [0.5f32, -0.5, 1.0, 2.0];
    /// let mut output = [0.0f32; 6]; // output_shape(2) is [2, 3]
    /// model.predict_into(&input, &[2, 2], &mut output)?;
    /// assert!((output[0] + output[1] + output[2] - 1.0).abs() < 1e-5); // softmax probabilities
    /// # Ok(())
    /// # }
    /// ```
    pub fn predict_into<T: Element>(&self, input: &[T], input_shape: &[i64], output: &mut [f32]) -> Result<()> {
        self.predict_into_ex(input, input_shape, output, None)
    }

    /// As [`predict_into`](Model::predict_into), stopped early as `options` say
    /// ([`Status::Cancelled`], [`Status::DeadlineExceeded`]).
    pub fn predict_into_with<T: Element>(
        &self,
        input: &[T],
        input_shape: &[i64],
        output: &mut [f32],
        options: &RunOptions,
    ) -> Result<()> {
        self.predict_into_ex(input, input_shape, output, Some(options))
    }

    fn predict_into_ex<T: Element>(
        &self,
        input: &[T],
        input_shape: &[i64],
        output: &mut [f32],
        options: Option<&RunOptions>,
    ) -> Result<()> {
        let Some(&batch) = input_shape.first() else {
            return Err(Error::new(
                Status::Shape,
                "input_shape is [], a scalar; a batch [N, <input shape>] is expected",
            ));
        };
        let needed = element_count(input_shape)?;
        if needed != input.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("input holds {} elements; input_shape {input_shape:?} needs {needed}", input.len()),
            ));
        }
        let output_shape = self.output_shape(batch)?;
        let needed = element_count(&output_shape)?;
        if needed != output.len() {
            return Err(Error::new(
                Status::Shape,
                format!(
                    "output holds {} elements; the prediction for a batch of {batch} is {output_shape:?}, {needed} elements",
                    output.len()
                ),
            ));
        }
        let input_bytes = std::mem::size_of_val(input);
        let output_bytes = std::mem::size_of_val(output);
        // SAFETY: the slices stay borrowed (input shared, output exclusively) until this call
        // returns, and LentMemory::drop makes sure nnrt has let go of them by then.
        let lent_input = unsafe {
            LentMemory::wrap(&self.ctx, T::DTYPE, input_shape, input.as_ptr().cast_mut().cast(), input_bytes)
        };
        let lent_input = match lent_input {
            Ok(lent) => lent,
            Err(e) if e.status() == Status::Unsupported => {
                // The backend's arrays are not in host memory (a GPU): copy in, predict, copy out.
                // SAFETY: T's values are T::DTYPE's elements bit for bit (Element is sealed).
                let bytes = unsafe { std::slice::from_raw_parts(input.as_ptr().cast::<u8>(), input_bytes) };
                let mut raw_input = std::ptr::null_mut();
                // SAFETY: the shape holds its rank's entries and bytes is readable; nnrt copies it.
                check(unsafe {
                    sys::nnrt_array_from_host(
                        self.ctx.as_raw(),
                        T::DTYPE.raw(),
                        input_shape.len() as i32,
                        input_shape.as_ptr(),
                        bytes.as_ptr().cast(),
                        bytes.len(),
                        &mut raw_input,
                    )
                })?;
                let device_input = Array::from_raw(raw_input).ok_or_else(|| null_output("nnrt_array_from_host"))?;
                let prediction = self.predict_ex(&device_input, options)?;
                // SAFETY: output is exclusively borrowed and holds output_bytes bytes; nnrt checks
                // that the prediction has exactly that size.
                return check(unsafe {
                    sys::nnrt_array_to_host(prediction.as_raw(), output.as_mut_ptr().cast(), output_bytes)
                });
            }
            Err(e) => return Err(e),
        };
        // SAFETY: as above, for the output slice, which nnrt writes.
        let lent_output = unsafe {
            LentMemory::wrap(&self.ctx, DType::F32, &output_shape, output.as_mut_ptr().cast(), output_bytes)
        }?;
        // SAFETY: the model and both arrays are live; options is live for the call or NULL.
        let status = unsafe {
            sys::nnrt_model_predict_into(self.as_raw(), lent_input.raw, lent_output.raw, run_options_ptr(options))
        };
        let outcome = check(status);
        drop(lent_output);
        drop(lent_input);
        resume_abort_panic();
        outcome
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

    /// Another model of the same config on the same context whose parameters are this model's
    /// memory, not a copy: many instances cost the parameters once. Parameters are copied on
    /// write: a model that is trained or has a parameter set gets its own copy first, so the others
    /// never see the change.
    pub fn share(&self) -> Result<Model> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: the handle is live; raw receives the new handle.
        check(unsafe { sys::nnrt_model_share(self.as_raw(), &mut raw) })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_share")?, ctx: Arc::clone(&self.ctx) })
    }

    /// An int8 copy of this model for inference (post-training static quantization), calibrated
    /// on the examples of `calibration` (its labels are not used): each dense and conv2d layer gets
    /// [`DType::I8`] weights with a scale per output unit or filter, and quantizes its input with a
    /// scale fixed from the range it took on the calibration examples. `options_json` is `""` for
    /// the defaults or a JSON object with `"batches"` (default 8; 0: all), `"batch_size"` (32),
    /// `"weight_bits"` (7, the default, or 8) and `"exclude"` (layer names kept in float).
    ///
    /// The copy is independent of this model: it predicts, evaluates, saves, loads and shares
    /// ([`param`](Model::param) gives its integer weights as F32; [`set_param`](Model::set_param)
    /// takes I8 values for them), but [`Trainer::new`](crate::Trainer::new) and
    /// [`export_onnx`](Model::export_onnx) refuse it with [`Status::Unsupported`], as does
    /// quantizing it again. Calibration examples that do not fit the model are [`Status::Shape`].
    pub fn quantize(&self, calibration: &Dataset, options_json: &str) -> Result<Model> {
        let options = c_options("options_json", options_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: both handles are live; options is a valid C string or NULL; raw receives the new
        // handle.
        check(unsafe {
            sys::nnrt_model_quantize(self.as_raw(), calibration.as_raw(), options_ptr(&options), &mut raw)
        })?;
        Ok(Model { raw: non_null(raw, "nnrt_model_quantize")?, ctx: Arc::clone(&self.ctx) })
    }

    /// The number of parameters (elements of every weight, bias and statistic).
    pub fn param_count(&self) -> Result<i64> {
        let mut count = 0;
        // SAFETY: the handle is live; count is a valid out-parameter.
        check(unsafe { sys::nnrt_model_param_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// A copy of the parameter `name` (such as `"layer0.weight"`, in PyTorch's layout) as an F32
    /// array (a quantized weight's integers too). An unknown name is [`Status::InvalidArgument`](crate::Status::InvalidArgument), and the
    /// message lists the model's parameter names.
    pub fn param(&self, name: &str) -> Result<Array> {
        let name = c_string("parameter name", name)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the handle is live; name is a valid C string; raw receives the new array.
        check(unsafe { sys::nnrt_model_get_param(self.as_raw(), name.as_ptr(), &mut raw) })?;
        Array::from_raw(raw).ok_or_else(|| null_output("nnrt_model_get_param"))
    }

    /// Copies `value` into the parameter `name`; it must have the parameter's shape, and a float
    /// value of another dtype is converted. A quantized layer's weight takes [`DType::I8`] values
    /// only (within [-63, 63] for 7-bit weights). Takes `&self` because nnrt locks the model itself, so
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

    /// As [`evaluate`](Model::evaluate), stopped early as `options` say (checked between batches and
    /// before every op): [`Status::Cancelled`] or [`Status::DeadlineExceeded`], and no evaluation.
    pub fn evaluate_with(&self, data: &Dataset, options: &RunOptions) -> Result<Evaluation> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: both handles and the options are live for the call; raw receives the evaluation.
        let status = unsafe {
            sys::nnrt_model_evaluate_ex(self.as_raw(), data.as_raw(), run_options_ptr(Some(options)), &mut raw)
        };
        let outcome = check(status);
        resume_abort_panic();
        outcome?;
        Ok(Evaluation::from_raw(non_null(raw, "nnrt_model_evaluate_ex")?))
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Model`.
    pub fn as_raw(&self) -> *mut sys::nnrt_model {
        self.raw.as_ptr()
    }
}

/// The number of elements of a shape; a negative dimension or an overflowing count is refused as
/// nnrt would refuse it.
fn element_count(shape: &[i64]) -> Result<usize> {
    shape.iter().try_fold(1usize, |count, &d| {
        let d = usize::try_from(d)
            .map_err(|_| Error::new(Status::InvalidArgument, format!("shape {shape:?} has a negative dimension")))?;
        count
            .checked_mul(d)
            .ok_or_else(|| Error::new(Status::InvalidArgument, format!("shape {shape:?} holds too many elements")))
    })
}

/// Rust memory lent to nnrt as an array (`nnrt_array_wrap_host`) for the length of one call. Drop
/// releases the array and checks that nnrt has let go of the memory.
struct LentMemory {
    raw: *mut sys::nnrt_array,
    /// Set by nnrt's release callback. Boxed, so that its address stays put while the value moves.
    released: Box<AtomicBool>,
}

unsafe extern "C" fn lent_memory_released(_data: *mut c_void, user: *mut c_void) {
    // SAFETY: user is the LentMemory's flag, which lives until nnrt has called this (see Drop).
    unsafe { &*user.cast::<AtomicBool>() }.store(true, Ordering::Release);
}

impl LentMemory {
    /// Wraps `nbytes` at `data` as a row-major `dtype` array of `shape`.
    ///
    /// # Safety
    /// `data` must be valid (and, where nnrt writes the array, writable) for nbytes bytes, aligned to
    /// the dtype, hold `dtype` elements, and stay borrowed until the LentMemory is dropped.
    unsafe fn wrap(
        ctx: &ContextHandle,
        dtype: DType,
        shape: &[i64],
        data: *mut c_void,
        nbytes: usize,
    ) -> Result<LentMemory> {
        let released = Box::new(AtomicBool::new(false));
        let user = (&*released as *const AtomicBool).cast_mut().cast::<c_void>();
        let ndim = i32::try_from(shape.len()).map_err(|_| {
            Error::new(Status::InvalidArgument, format!("a rank of {} does not fit an int32_t", shape.len()))
        })?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the caller vouches for data; shape holds ndim entries; NULL strides: row-major.
        check(unsafe {
            sys::nnrt_array_wrap_host(
                ctx.as_raw(),
                dtype.raw(),
                ndim,
                shape.as_ptr(),
                std::ptr::null(),
                data,
                nbytes,
                Some(lent_memory_released),
                user,
                &mut raw,
            )
        })?;
        let raw = non_null(raw, "nnrt_array_wrap_host")?.as_ptr();
        Ok(LentMemory { raw, released })
    }
}

impl Drop for LentMemory {
    fn drop(&mut self) {
        // SAFETY: the array is live and released exactly once.
        unsafe { sys::nnrt_array_release(self.raw) };
        if !self.released.load(Ordering::Acquire) {
            // nnrt promises to let go of lent memory when its last array goes, and predictions keep
            // no reference. Were it still holding the memory, returning would let it use memory Rust
            // frees or reuses; stopping the process is the only safe way out of such a library bug.
            eprintln!("nnrt: memory lent to nnrt_array_wrap_host was not given back after its array was released");
            std::process::abort();
        }
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
