//! The two 16-bit float types nnrt arrays can hold, as plain bit containers with exact conversions
//! (round to nearest even, like the library's own), so F16 and BF16 data can cross the API without
//! an extra crate.

use std::fmt;

/// An IEEE 754 binary16 value (`NNRT_DTYPE_F16`), stored as its bits. `==` compares the bits.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(u16);

/// A bfloat16 value (`NNRT_DTYPE_BF16`): the upper half of an f32, stored as its bits. `==` compares
/// the bits.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct BF16(u16);

impl F16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> F16 {
        F16(bits)
    }

    /// The bits of the value.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The nearest binary16 value (ties to even); too large becomes infinity, NaN stays NaN.
    pub fn from_f32(x: f32) -> F16 {
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exponent = ((bits >> 23) & 0xff) as i32;
        let mantissa = bits & 0x7f_ffff;
        if exponent == 0xff {
            // Infinity stays infinity; a NaN keeps its top payload bits and stays quiet.
            let nan = if mantissa != 0 { 0x200 | (mantissa >> 13) as u16 } else { 0 };
            return F16(sign | 0x7c00 | nan);
        }
        // The exponent re-biased for binary16 (bias 15 instead of 127).
        let half_exponent = exponent - 112;
        if half_exponent >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if half_exponent <= 0 {
            // A binary16 subnormal (or zero): the value in units of 2^-24, rounded.
            if half_exponent < -10 {
                return F16(sign);
            }
            let significand = mantissa | 0x80_0000;
            let shift = (14 - half_exponent) as u32;
            return F16(sign | round_shift(significand, shift) as u16);
        }
        // Rounding may carry into the exponent, which is exactly the next binade (or infinity).
        let unrounded = ((half_exponent as u32) << 10) | (mantissa >> 13);
        let rounded = unrounded + round_up(mantissa, 13, unrounded) as u32;
        F16(sign | rounded as u16)
    }

    /// The exact f32 value.
    pub fn to_f32(self) -> f32 {
        let sign = ((self.0 & 0x8000) as u32) << 16;
        let exponent = ((self.0 >> 10) & 0x1f) as u32;
        let mantissa = (self.0 & 0x3ff) as u32;
        let magnitude = match exponent {
            0 => {
                // A subnormal (or zero) is mantissa * 2^-24, exact in f32.
                let value = mantissa as f32 * 2f32.powi(-24);
                return if sign != 0 { -value } else { value };
            }
            0x1f => 0x7f80_0000 | (mantissa << 13),
            _ => ((exponent + 112) << 23) | (mantissa << 13),
        };
        f32::from_bits(sign | magnitude)
    }
}

impl BF16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> BF16 {
        BF16(bits)
    }

    /// The bits of the value.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// The nearest bfloat16 value (ties to even); NaN stays a quiet NaN.
    pub fn from_f32(x: f32) -> BF16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return BF16((bits >> 16) as u16 | 0x40);
        }
        let upper = bits >> 16;
        BF16((upper + round_up(bits, 16, upper) as u32) as u16)
    }

    /// The exact f32 value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// Whether dropping the low `dropped` bits of `bits` (leaving `kept`) rounds up, ties to even.
fn round_up(bits: u32, dropped: u32, kept: u32) -> bool {
    let rest = bits & ((1 << dropped) - 1);
    let half = 1 << (dropped - 1);
    rest > half || (rest == half && kept & 1 == 1)
}

/// `value >> shift`, rounded to nearest even.
fn round_shift(value: u32, shift: u32) -> u32 {
    let kept = value >> shift;
    kept + round_up(value, shift, kept) as u32
}

impl From<F16> for f32 {
    fn from(x: F16) -> f32 {
        x.to_f32()
    }
}

impl From<BF16> for f32 {
    fn from(x: BF16) -> f32 {
        x.to_f32()
    }
}

impl fmt::Debug for F16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}f16", self.to_f32())
    }
}

impl fmt::Display for F16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

impl fmt::Debug for BF16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}bf16", self.to_f32())
    }
}

impl fmt::Display for BF16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_f32(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_every_value() {
        for bits in 0..=u16::MAX {
            let x = F16::from_bits(bits);
            if x.to_f32().is_nan() {
                assert!(F16::from_f32(x.to_f32()).to_f32().is_nan());
            } else {
                assert_eq!(F16::from_f32(x.to_f32()), x, "bits {bits:#06x}");
            }
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even() {
        assert_eq!(F16::from_f32(1.0).to_bits(), 0x3c00);
        assert_eq!(F16::from_f32(65504.0).to_bits(), 0x7bff);
        assert_eq!(F16::from_f32(65520.0).to_bits(), 0x7c00); // halfway to the next binade: infinity
        assert_eq!(F16::from_f32(1.0 + 2f32.powi(-11)).to_bits(), 0x3c00); // tie, even stays
        assert_eq!(F16::from_f32(1.0 + 3.0 * 2f32.powi(-11)).to_bits(), 0x3c02); // tie, odd goes up
        assert_eq!(F16::from_f32(2f32.powi(-24)).to_bits(), 0x0001); // smallest subnormal
        assert_eq!(F16::from_f32(2f32.powi(-25)).to_bits(), 0x0000); // tie to even: zero
        assert_eq!(F16::from_f32(-0.0).to_bits(), 0x8000);
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(BF16::from_f32(1.0).to_bits(), 0x3f80);
        assert_eq!(BF16::from_f32(f32::from_bits(0x3f80_8000)).to_bits(), 0x3f80); // tie, even
        assert_eq!(BF16::from_f32(f32::from_bits(0x3f81_8000)).to_bits(), 0x3f82); // tie, odd
        assert_eq!(BF16::from_bits(0x4049).to_f32(), f32::from_bits(0x4049_0000));
        assert!(BF16::from_f32(f32::NAN).to_f32().is_nan());
    }
}
