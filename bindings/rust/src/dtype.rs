//! Element types: the [`DType`] enum and the Rust types that hold each one ([`Element`]).

use std::fmt;

use crate::half::{BF16, F16};
use crate::sys;

/// The element type of an array (`nnrt_dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DType {
    /// 32-bit float; Rust type `f32`.
    F32 = sys::NNRT_DTYPE_F32,
    /// 64-bit float; Rust type `f64`.
    F64 = sys::NNRT_DTYPE_F64,
    /// IEEE 754 binary16; Rust type [`F16`].
    F16 = sys::NNRT_DTYPE_F16,
    /// bfloat16; Rust type [`BF16`].
    BF16 = sys::NNRT_DTYPE_BF16,
    /// 32-bit signed integer; Rust type `i32`.
    I32 = sys::NNRT_DTYPE_I32,
    /// 64-bit signed integer; Rust type `i64`.
    I64 = sys::NNRT_DTYPE_I64,
    /// 8-bit unsigned integer; Rust type `u8`.
    U8 = sys::NNRT_DTYPE_U8,
    /// One byte, 0 or 1; Rust type `bool`.
    Bool = sys::NNRT_DTYPE_BOOL,
    /// 8-bit signed integer; Rust type `i8`. Holds quantized weights ([`Model::quantize`]); arrays
    /// of it are made, read, copied and cast, but arithmetic ops do not take it.
    ///
    /// [`Model::quantize`]: crate::Model::quantize
    I8 = sys::NNRT_DTYPE_I8,
}

impl DType {
    /// Every dtype, in the order of their C values.
    pub const ALL: [DType; 9] =
        [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8, DType::Bool, DType::I8];

    /// The dtype of a raw `nnrt_dtype`, or `None` for a value this binding does not know.
    pub fn from_raw(raw: i32) -> Option<DType> {
        DType::ALL.into_iter().find(|t| *t as i32 == raw)
    }

    /// The raw `nnrt_dtype` value.
    pub fn raw(self) -> i32 {
        self as i32
    }

    /// The size of one element in bytes, as the library reports it (`nnrt_dtype_size`).
    pub fn size(self) -> usize {
        // SAFETY: plain function of an integer.
        unsafe { sys::nnrt_dtype_size(self.raw()) }
    }

    /// The name nnrt's JSON uses for the dtype (the `cast` op's `"dtype"` attribute): `"f32"`,
    /// `"bf16"`, `"bool"` and so on.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::Bool => "bool",
            DType::I8 => "i8",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values are the elements of one [`DType`], bit for bit, so slices of it can be
/// copied to and from arrays directly. Implemented for `f32`, `f64`, [`F16`], [`BF16`], `i32`,
/// `i64`, `u8`, `i8` and `bool`; sealed, because the copy relies on the exact layout.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The dtype an array of this type has.
    const DTYPE: DType;
}

macro_rules! element {
    ($($rust:ty => $dtype:ident),* $(,)?) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const DTYPE: DType = DType::$dtype;
        }
        // The copy assumes the Rust type has the dtype's size.
        const _: () = assert!(std::mem::size_of::<$rust>() == match DType::$dtype {
            DType::F64 | DType::I64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::U8 | DType::I8 | DType::Bool => 1,
        });
    )*};
}

element! {
    f32 => F32,
    f64 => F64,
    F16 => F16,
    BF16 => BF16,
    i32 => I32,
    i64 => I64,
    u8 => U8,
    bool => Bool,
    i8 => I8,
}
