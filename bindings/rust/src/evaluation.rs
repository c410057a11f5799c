//! [`Evaluation`]: the metrics of a model on a dataset.

use std::fmt;
use std::ptr::NonNull;

use crate::error::{Result, check};
use crate::sys;
use crate::text::read_string;

/// The metrics of a model on a dataset (`nnrt_evaluation`), made by
/// [`Model::evaluate`](crate::Model::evaluate). Immutable, so it may be read from many threads at
/// once (`Send + Sync`), as the C API states.
pub struct Evaluation {
    raw: NonNull<sys::nnrt_evaluation>,
}

// SAFETY: an evaluation is not tied to the thread that made it.
unsafe impl Send for Evaluation {}
// SAFETY: nnrt.h: evaluations are immutable once made and may be read from many threads at once.
unsafe impl Sync for Evaluation {}

impl Evaluation {
    pub(crate) fn from_raw(raw: NonNull<sys::nnrt_evaluation>) -> Evaluation {
        Evaluation { raw }
    }

    /// The fraction of examples classified right, or `None` for a regression evaluation (float
    /// targets), where the library reports NaN.
    pub fn accuracy(&self) -> Result<Option<f64>> {
        let mut accuracy = 0.0;
        // SAFETY: the handle is live; accuracy is a valid out-parameter.
        check(unsafe { sys::nnrt_evaluation_accuracy(self.as_raw(), &mut accuracy) })?;
        Ok(if accuracy.is_nan() { None } else { Some(accuracy) })
    }

    /// The evaluation as JSON: for class labels "examples", "classes", "accuracy", "per_class"
    /// (precision, recall, F1, support), "macro_avg", "weighted_avg" and "confusion_matrix"; for
    /// float targets "examples", "mse", "mae" and "r2".
    pub fn report(&self) -> Result<String> {
        // SAFETY: the handle is live and the closure passes read_string's buffer through.
        read_string(|buf, cap, len| unsafe { sys::nnrt_evaluation_report(self.as_raw(), buf, cap, len) })
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Evaluation`.
    pub fn as_raw(&self) -> *mut sys::nnrt_evaluation {
        self.raw.as_ptr()
    }
}

impl Drop for Evaluation {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once.
        unsafe { sys::nnrt_evaluation_release(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Evaluation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Evaluation").field("raw", &self.raw).finish()
    }
}
