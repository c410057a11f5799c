//! [`Array`]: a typed n-dimensional array on a context's device.

use std::fmt;
use std::mem::size_of;
use std::ptr::NonNull;

use crate::context::{Context, non_null};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result, Status, check};
use crate::sys;

/// A typed n-dimensional array on a context's device (`nnrt_array`). Arrays are immutable: ops
/// make new arrays instead of changing their inputs.
///
/// Arrays may be read from many threads at once (`Send + Sync`). An array keeps its context alive,
/// so it outlives the [`Context`] value it was made from.
pub struct Array {
    raw: NonNull<sys::nnrt_array>,
}

// SAFETY: an array is not tied to the thread that made it.
unsafe impl Send for Array {}
// SAFETY: the C API states arrays may be read from many threads at once, and this type offers only
// reads.
unsafe impl Sync for Array {}

/// An array's element type and shape (`nnrt_array_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayInfo {
    /// The element type.
    pub dtype: DType,
    /// The dimensions, outermost first; empty for a scalar.
    pub shape: Vec<i64>,
}

impl ArrayInfo {
    /// The number of elements: the product of the dimensions (1 for a scalar).
    pub fn len(&self) -> usize {
        self.shape.iter().map(|&d| d as usize).product()
    }

    /// Whether the array has no elements (a dimension is 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Array {
    /// A zero-filled array of `dtype` and `shape` (`[]` for a scalar) on the context's device.
    pub fn zeros(ctx: &Context, dtype: DType, shape: &[i64]) -> Result<Array> {
        let mut raw = std::ptr::null_mut();
        let ndim = rank(shape)?;
        // SAFETY: shape holds ndim entries; raw receives the new handle.
        check(unsafe { sys::nnrt_array_create(ctx.as_raw(), dtype.raw(), ndim, shape.as_ptr(), &mut raw) })?;
        Ok(Array { raw: non_null(raw, "nnrt_array_create")? })
    }

    /// An array of `shape` holding `data` in row-major order; the dtype follows from the element
    /// type. `data.len()` must be the product of `shape` ([`Status::InvalidArgument`] otherwise).
    ///
    /// ```
    /// # fn main() -> nnrt::Result<()> {
    /// let ctx = nnrt::Context::with_options(r#"{"threads": 1}"#)?;
    /// let a = nnrt::Array::from_slice(&ctx, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let sum = ctx.op("add", &[&a, &a], "")?;
    /// assert_eq!(sum.to_vec::<f32>()?, [2.0, 4.0, 6.0, 8.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_slice<T: Element>(ctx: &Context, shape: &[i64], data: &[T]) -> Result<Array> {
        // SAFETY: T's values are T::DTYPE's elements bit for bit (Element is sealed).
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        Array::from_bytes(ctx, T::DTYPE, shape, bytes)
    }

    /// A scalar (rank 0) array holding `value`.
    pub fn scalar<T: Element>(ctx: &Context, value: T) -> Result<Array> {
        Array::from_slice(ctx, &[], &[value])
    }

    /// An array of `dtype` and `shape` from raw row-major element bytes in native byte order, for
    /// data whose Rust type is not an [`Element`]. BOOL bytes must be 0 or 1.
    pub fn from_bytes(ctx: &Context, dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Array> {
        let mut raw = std::ptr::null_mut();
        let ndim = rank(shape)?;
        // SAFETY: shape holds ndim entries and bytes is readable for its length; nnrt copies it.
        check(unsafe {
            sys::nnrt_array_from_host(
                ctx.as_raw(),
                dtype.raw(),
                ndim,
                shape.as_ptr(),
                bytes.as_ptr().cast(),
                bytes.len(),
                &mut raw,
            )
        })?;
        Ok(Array { raw: non_null(raw, "nnrt_array_from_host")? })
    }

    /// The elements, row-major, as `T`, which must be the array's dtype ([`Status::Dtype`]
    /// otherwise: the bytes of an i32 array are not f32 values). Waits for pending device work.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let dtype = self.dtype()?;
        if dtype != T::DTYPE {
            return Err(Error::new(
                Status::Dtype,
                format!("the array holds {dtype} elements; read it as {dtype}, or cast it to {} first", T::DTYPE),
            ));
        }
        let nbytes = self.nbytes()?;
        let len = nbytes / size_of::<T>();
        let mut out: Vec<T> = Vec::with_capacity(len);
        // SAFETY: the spare capacity holds len elements, exactly nbytes bytes, which nnrt fills.
        check(unsafe { sys::nnrt_array_to_host(self.as_raw(), out.as_mut_ptr().cast(), nbytes) })?;
        if T::DTYPE == DType::Bool {
            // A bool other than 0 or 1 would be undefined behaviour in Rust; check the raw bytes
            // before they become bools.
            // SAFETY: nnrt wrote these nbytes bytes.
            let bytes = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), nbytes) };
            if let Some(bad) = bytes.iter().find(|&&b| b > 1) {
                return Err(Error::new(Status::Internal, format!("a BOOL element holds {bad}, not 0 or 1")));
            }
        }
        // SAFETY: every element was written (and checked, for bool) above.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// The elements' raw bytes, row-major, in native byte order.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let nbytes = self.nbytes()?;
        let mut out = vec![0u8; nbytes];
        // SAFETY: out holds exactly nbytes bytes.
        check(unsafe { sys::nnrt_array_to_host(self.as_raw(), out.as_mut_ptr().cast(), nbytes) })?;
        Ok(out)
    }

    /// The element type and shape.
    pub fn info(&self) -> Result<ArrayInfo> {
        let mut dtype = 0;
        let mut ndim = 0;
        let mut shape = [0i64; sys::NNRT_MAX_DIMS];
        // SAFETY: shape has room for NNRT_MAX_DIMS entries, as the C API requires.
        check(unsafe { sys::nnrt_array_info(self.as_raw(), &mut dtype, &mut ndim, shape.as_mut_ptr()) })?;
        let known = DType::from_raw(dtype).ok_or_else(|| {
            Error::new(Status::Dtype, format!("the library reports dtype {dtype}, which this binding does not know"))
        })?;
        let ndim = usize::try_from(ndim).unwrap_or(0).min(sys::NNRT_MAX_DIMS);
        Ok(ArrayInfo { dtype: known, shape: shape[..ndim].to_vec() })
    }

    /// The element type.
    pub fn dtype(&self) -> Result<DType> {
        Ok(self.info()?.dtype)
    }

    /// The dimensions, outermost first; empty for a scalar.
    pub fn shape(&self) -> Result<Vec<i64>> {
        Ok(self.info()?.shape)
    }

    /// The size in bytes: the element count times the dtype size.
    pub fn nbytes(&self) -> Result<usize> {
        let mut nbytes = 0;
        // SAFETY: the handle is live; nbytes is a valid out-parameter.
        check(unsafe { sys::nnrt_array_nbytes(self.as_raw(), &mut nbytes) })?;
        Ok(nbytes)
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Array`.
    pub fn as_raw(&self) -> *mut sys::nnrt_array {
        self.raw.as_ptr()
    }

    /// Takes ownership of a handle the library returned; `None` for NULL.
    pub(crate) fn from_raw(raw: *mut sys::nnrt_array) -> Option<Array> {
        NonNull::new(raw).map(|raw| Array { raw })
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once.
        unsafe { sys::nnrt_array_release(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Ok(info) => f.debug_struct("Array").field("dtype", &info.dtype).field("shape", &info.shape).finish(),
            Err(_) => f.debug_struct("Array").field("raw", &self.raw).finish(),
        }
    }
}

/// A shape's rank as the C API takes it. Ranks above NNRT_MAX_DIMS are passed on for nnrt to refuse
/// with its own message; only one that does not fit an int32_t is refused here.
fn rank(shape: &[i64]) -> Result<i32> {
    i32::try_from(shape.len())
        .map_err(|_| Error::new(Status::InvalidArgument, format!("a rank of {} does not fit an int32_t", shape.len())))
}
