//! [`Dataset`]: examples and labels in host memory, ready for batching.

use std::fmt;
use std::path::Path;
use std::ptr::NonNull;

use crate::array::Array;
use crate::context::{Context, non_null};
use crate::error::{Error, Result, Status, c_string, check};
use crate::json;
use crate::sys;

/// Examples and labels held in host memory, ready for batching (`nnrt_dataset`).
///
/// A dataset is immutable once made, so, as the C API states, it may move between threads and be
/// used from many at once (`Send + Sync`): several trainers may fit on one dataset, or a model be
/// evaluated on it while it trains another. A trainer using a dataset keeps it alive.
pub struct Dataset {
    raw: NonNull<sys::nnrt_dataset>,
}

// SAFETY: a dataset is not tied to the thread that made it.
unsafe impl Send for Dataset {}
// SAFETY: nnrt.h: datasets are immutable once made and may be read from many threads at once.
unsafe impl Sync for Dataset {}

impl Dataset {
    /// A dataset from arrays whose dimension 0 counts the examples: `features` `[N, ...]` of any
    /// numeric dtype, and `labels` `[N]` of class indices (I32, I64 or U8) or `[N, ...]` of float
    /// targets. The data is copied, so the arrays may be dropped afterwards.
    pub fn from_arrays(ctx: &Context, features: &Array, labels: &Array) -> Result<Dataset> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: all handles are live; raw receives the new dataset.
        check(unsafe { sys::nnrt_dataset_from_arrays(ctx.as_raw(), features.as_raw(), labels.as_raw(), &mut raw) })?;
        Ok(Dataset { raw: non_null(raw, "nnrt_dataset_from_arrays")? })
    }

    /// A dataset described by a JSON spec: `{"format": "idx", "images": ..., "labels": ...,
    /// "scale": ..., "limit": ...}` for (gzipped) IDX files as in Fashion-MNIST, or
    /// `{"format": "csv", "path": ..., "label_column": 0, "header": true, "limit": ...}`. A missing
    /// file is [`Status::Io`], a malformed one [`Status::Corrupt`].
    pub fn load(ctx: &Context, spec_json: &str) -> Result<Dataset> {
        let spec = c_string("spec_json", spec_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: spec is a valid C string; raw receives the new dataset.
        check(unsafe { sys::nnrt_dataset_load(ctx.as_raw(), spec.as_ptr(), &mut raw) })?;
        Ok(Dataset { raw: non_null(raw, "nnrt_dataset_load")? })
    }

    /// IDX image and label files (plain or gzipped), pixels scaled by 1/255, keeping only the first
    /// `limit` examples when given: [`load`](Dataset::load) with the spec written for you.
    pub fn load_idx(
        ctx: &Context,
        images: impl AsRef<Path>,
        labels: impl AsRef<Path>,
        limit: Option<i64>,
    ) -> Result<Dataset> {
        let mut spec = format!(
            r#"{{"format": "idx", "images": {}, "labels": {}"#,
            json::quote(&path_text(images.as_ref())?),
            json::quote(&path_text(labels.as_ref())?)
        );
        if let Some(limit) = limit {
            spec += &format!(r#", "limit": {limit}"#);
        }
        spec += "}";
        Dataset::load(ctx, &spec)
    }

    /// The number of examples.
    pub fn len(&self) -> Result<i64> {
        let mut examples = 0;
        // SAFETY: the handle is live; examples is a valid out-parameter.
        check(unsafe { sys::nnrt_dataset_size(self.as_raw(), &mut examples) })?;
        Ok(examples)
    }

    /// Whether the dataset has no examples.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Examples `[start, start + count)` as new arrays on `ctx`'s device: the features as F32
    /// `[count, <example shape>]` (scaled as the spec says) and the labels as I64 class indices
    /// `[count]` or F32 targets `[count, ...]`.
    pub fn examples(&self, ctx: &Context, start: i64, count: i64) -> Result<(Array, Array)> {
        let mut features = std::ptr::null_mut();
        let mut labels = std::ptr::null_mut();
        // SAFETY: all handles are live; features and labels receive new arrays.
        check(unsafe {
            sys::nnrt_dataset_examples(ctx.as_raw(), self.as_raw(), start, count, &mut features, &mut labels)
        })?;
        // Wrap both before checking either, so neither leaks.
        match (Array::from_raw(features), Array::from_raw(labels)) {
            (Some(f), Some(l)) => Ok((f, l)),
            _ => Err(Error::new(Status::Internal, "nnrt_dataset_examples returned NNRT_OK but no arrays")),
        }
    }

    /// The features of examples `[start, start + count)` only, as [`examples`](Dataset::examples)
    /// gives them.
    pub fn features(&self, ctx: &Context, start: i64, count: i64) -> Result<Array> {
        let mut features = std::ptr::null_mut();
        // SAFETY: all handles are live; NULL labels asks nnrt to skip them.
        check(unsafe {
            sys::nnrt_dataset_examples(ctx.as_raw(), self.as_raw(), start, count, &mut features, std::ptr::null_mut())
        })?;
        Array::from_raw(features)
            .ok_or_else(|| Error::new(Status::Internal, "nnrt_dataset_examples returned NNRT_OK but no array"))
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Dataset`.
    pub fn as_raw(&self) -> *mut sys::nnrt_dataset {
        self.raw.as_ptr()
    }
}

/// A path as JSON text; JSON strings are Unicode, so a path that is not cannot go into a spec.
fn path_text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::new(Status::InvalidArgument, format!("path {} is not valid UTF-8", path.display())))
}

impl Drop for Dataset {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once; trainers hold their own reference.
        unsafe { sys::nnrt_dataset_release(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dataset").field("raw", &self.raw).finish()
    }
}
