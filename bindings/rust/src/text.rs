//! Strings the C API returns in the caller's buffer, snprintf-style: `(buf, cap, len)`.

use std::ffi::c_char;

use crate::error::{Result, check};
use crate::sys::nnrt_status;

/// Reads a string through a `(buf, cap, len)` call: first with `cap = 0` to learn the length, then
/// into a buffer of that size. If the text grew in between (a model summary while another thread
/// trains the model), it asks again with the new length.
pub(crate) fn read_string(mut call: impl FnMut(*mut c_char, usize, *mut usize) -> nnrt_status) -> Result<String> {
    let mut len = 0usize;
    check(call(std::ptr::null_mut(), 0, &mut len))?;
    loop {
        let mut buf = vec![0u8; len + 1];
        let mut full = 0usize;
        check(call(buf.as_mut_ptr().cast(), buf.len(), &mut full))?;
        if full <= len {
            buf.truncate(full);
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
        len = full;
    }
}
