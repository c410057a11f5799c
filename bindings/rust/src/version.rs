//! Versions: the library's, and the header's this binding was written against.

use std::ffi::CStr;

use crate::error::{Error, Result, Status};
use crate::sys;

/// The ABI version (soname major) this binding was written against (`NNRT_ABI_VERSION`).
pub const ABI_VERSION: u32 = sys::NNRT_ABI_VERSION;

/// The header version this binding was written against, "MAJOR.MINOR.PATCH".
pub const HEADER_VERSION: &str = "0.1.0";

// HEADER_VERSION must say what the sys constants say.
const _: () = assert!(sys::NNRT_VERSION_MAJOR == 0 && sys::NNRT_VERSION_MINOR == 1 && sys::NNRT_VERSION_PATCH == 0);

/// The ABI version of the loaded library (`nnrt_abi_version`).
pub fn abi_version() -> u32 {
    // SAFETY: no arguments, no state.
    unsafe { sys::nnrt_abi_version() }
}

/// The loaded library's version, "MAJOR.MINOR.PATCH" (`nnrt_version_string`).
pub fn version() -> &'static str {
    // SAFETY: nnrt returns a static NUL-terminated string, never NULL.
    let text = unsafe { CStr::from_ptr(sys::nnrt_version_string()) };
    text.to_str().unwrap_or("unknown")
}

/// Checks that the loaded library has the ABI this binding was written for;
/// [`Status::Version`] names both versions otherwise.
pub fn check_abi() -> Result<()> {
    let loaded = abi_version();
    if loaded == ABI_VERSION {
        Ok(())
    } else {
        Err(Error::new(
            Status::Version,
            format!(
                "the loaded libnnrt has ABI version {loaded}, this binding was written for ABI version {ABI_VERSION}"
            ),
        ))
    }
}
