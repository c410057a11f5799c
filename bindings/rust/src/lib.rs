//! Rust binding to nnrt, an embeddable deep-learning runtime: a thin, safe layer over its C API
//! (`include/nnrt/nnrt.h`, which stays the reference manual for what every call does).
//!
//! Each C object has a Rust owner that releases it on drop: [`Context`], [`Array`], [`Model`],
//! [`Dataset`], [`Trainer`] and [`Evaluation`]. Objects keep alive what they depend on inside the
//! library, so they carry no lifetimes and may be dropped in any order (a context before its
//! arrays, a model before its trainer). Every fallible call returns [`Result`], whose [`Error`]
//! holds the [`Status`] and the message nnrt gave for that very call.
//!
//! Thread safety follows the C API: contexts and models are `Send + Sync`; arrays, datasets and
//! evaluations are `Send + Sync` (they are immutable once made); a trainer is `Send` only (one
//! thread at a time), and a running [`Trainer::fit`] is stopped from any thread through a
//! [`CancelHandle`]. [`RunOptions`] stop predictions, evaluations and loads the same way, or after a
//! timeout; [`Model::predict_into`] predicts from one Rust slice into another without copying.
//!
//! Configuration is JSON text, as in the C API; `""` stands for "the defaults" wherever options are
//! optional. [`json::Value`] reads the JSON nnrt returns.
//!
//! ```
//! use nnrt::{Array, Context, Dataset, Model, Trainer};
//!
//! # fn main() -> nnrt::Result<()> {
//! nnrt::check_abi()?;
//! let ctx = Context::with_options(r#"{"threads": 1, "seed": 1}"#)?;
//! // Learn y = x0 > x1 from four points.
//! let x = Array::from_slice(&ctx, &[4, 2], &[0.0f32, 1.0, 1.0, 0.0, 0.2, 0.9, 0.8, 0.1])?;
//! let y = Array::from_slice(&ctx, &[4], &[0i64, 1, 0, 1])?;
//! let model = Model::new(&ctx, r#"{"input": [2], "layers": [{"type": "output", "units": 2, "loss": "nll"}]}"#)?;
//! let options = r#"{"optimizer": {"type": "adam", "learning_rate": 0.1}, "batch_size": 4}"#;
//! let mut trainer = Trainer::new(&model, options)?;
//! trainer.fit(&Dataset::from_arrays(&ctx, &x, &y)?, None, 50)?;
//! let p = model.predict(&x)?.to_vec::<f32>()?; // [4, 2]: per example, class 0 then class 1
//! assert!(p[0] > 0.5 && p[3] > 0.5 && p[4] > 0.5 && p[7] > 0.5);
//! # Ok(())
//! # }
//! ```

mod array;
mod context;
mod dataset;
mod dtype;
mod error;
mod evaluation;
mod half;
pub mod json;
mod log;
mod model;
mod op;
mod progress;
mod run_options;
pub mod sys;
mod text;
mod trainer;
mod version;

pub use array::{Array, ArrayInfo};
pub use context::Context;
pub use dataset::Dataset;
pub use dtype::{DType, Element};
pub use error::{Error, Result, Status, last_error_message};
pub use evaluation::Evaluation;
pub use half::{BF16, F16};
pub use log::{LogLevel, reset_log_callback, set_log_callback};
pub use model::Model;
pub use progress::{DeviceLoad, Progress};
pub use run_options::RunOptions;
pub use trainer::{CancelHandle, Trainer};
pub use version::{ABI_VERSION, HEADER_VERSION, abi_version, check_abi, version};
