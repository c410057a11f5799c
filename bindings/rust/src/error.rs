//! Errors: the status a call failed with and the message nnrt gave for it.

use std::ffi::{CStr, CString, c_char};
use std::fmt;
use std::path::Path;

use crate::sys;

/// Why a call failed: the `NNRT_ERR_*` status codes of the C API.
///
/// The library may append statuses in a later version; those arrive as [`Status::Unknown`] with the
/// raw value, so a newer library never makes this binding misbehave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// NULL where not allowed, a bad value, an unknown JSON key, a wrong handle.
    InvalidArgument,
    /// The host or the device ran out of memory.
    OutOfMemory,
    /// Shapes do not fit together; the message gives both.
    Shape,
    /// A dtype the operation does not accept.
    Dtype,
    /// A valid request this build or backend cannot do.
    Unsupported,
    /// A backend failed to load or failed at run time.
    Backend,
    /// The requested device does not exist here.
    NoDevice,
    /// A file could not be opened, read or written.
    Io,
    /// A file or buffer is malformed, truncated or fails its checksum.
    Corrupt,
    /// A file or plugin from an incompatible version.
    Version,
    /// Stopped by [`Trainer::cancel`](crate::Trainer::cancel), a [`CancelHandle`](crate::CancelHandle),
    /// [`RunOptions::cancel`](crate::RunOptions::cancel) or an abort callback.
    Cancelled,
    /// A bug in nnrt: please report it with the message.
    Internal,
    /// A call ran past its [`RunOptions`](crate::RunOptions)' timeout.
    DeadlineExceeded,
    /// A status this binding does not know (from a newer library), with its raw value.
    Unknown(i32),
}

impl Status {
    /// The status for a raw `nnrt_status`, or `None` for `NNRT_OK`.
    pub fn from_raw(raw: i32) -> Option<Status> {
        Some(match raw {
            sys::NNRT_OK => return None,
            sys::NNRT_ERR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::NNRT_ERR_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::NNRT_ERR_SHAPE => Status::Shape,
            sys::NNRT_ERR_DTYPE => Status::Dtype,
            sys::NNRT_ERR_UNSUPPORTED => Status::Unsupported,
            sys::NNRT_ERR_BACKEND => Status::Backend,
            sys::NNRT_ERR_NO_DEVICE => Status::NoDevice,
            sys::NNRT_ERR_IO => Status::Io,
            sys::NNRT_ERR_CORRUPT => Status::Corrupt,
            sys::NNRT_ERR_VERSION => Status::Version,
            sys::NNRT_ERR_CANCELLED => Status::Cancelled,
            sys::NNRT_ERR_INTERNAL => Status::Internal,
            sys::NNRT_ERR_DEADLINE_EXCEEDED => Status::DeadlineExceeded,
            other => Status::Unknown(other),
        })
    }

    /// The raw `nnrt_status` value.
    pub fn raw(self) -> i32 {
        match self {
            Status::InvalidArgument => sys::NNRT_ERR_INVALID_ARGUMENT,
            Status::OutOfMemory => sys::NNRT_ERR_OUT_OF_MEMORY,
            Status::Shape => sys::NNRT_ERR_SHAPE,
            Status::Dtype => sys::NNRT_ERR_DTYPE,
            Status::Unsupported => sys::NNRT_ERR_UNSUPPORTED,
            Status::Backend => sys::NNRT_ERR_BACKEND,
            Status::NoDevice => sys::NNRT_ERR_NO_DEVICE,
            Status::Io => sys::NNRT_ERR_IO,
            Status::Corrupt => sys::NNRT_ERR_CORRUPT,
            Status::Version => sys::NNRT_ERR_VERSION,
            Status::Cancelled => sys::NNRT_ERR_CANCELLED,
            Status::Internal => sys::NNRT_ERR_INTERNAL,
            Status::DeadlineExceeded => sys::NNRT_ERR_DEADLINE_EXCEEDED,
            Status::Unknown(raw) => raw,
        }
    }

    /// The library's name for the status, such as `"NNRT_ERR_SHAPE"` (`"NNRT_ERR_UNKNOWN"` for a
    /// value it does not know either).
    pub fn name(self) -> &'static str {
        // SAFETY: nnrt_status_name accepts any value and returns a static, NUL-terminated string.
        let name = unsafe { CStr::from_ptr(sys::nnrt_status_name(self.raw())) };
        name.to_str().unwrap_or("NNRT_ERR_UNKNOWN")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: its [`Status`] and the message nnrt gave for it (what was expected and what was
/// given). Errors the binding finds before calling nnrt (a NUL byte inside a string, reading an
/// array as the wrong element type) use the same statuses the C API would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// Makes an error from a status and a message.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }

    /// Why the call failed.
    pub fn status(&self) -> Status {
        self.status
    }

    /// What nnrt said about it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// The result of every fallible call in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// The message of the last failed nnrt call on this thread, or `""` if none failed yet.
///
/// Every [`Error`] already carries its message; this is for code that calls [`sys`] directly.
pub fn last_error_message() -> String {
    // SAFETY: nnrt_last_error never returns NULL, and the string stays valid until the next nnrt
    // call on this thread; it is copied before anything else runs.
    unsafe { CStr::from_ptr(sys::nnrt_last_error()) }.to_string_lossy().into_owned()
}

/// Turns a raw status into a `Result`. It must be called right after the call that returned
/// `status`, on the same thread, with no nnrt call in between: nnrt_last_error() is per thread and
/// only describes the latest failure.
pub(crate) fn check(status: sys::nnrt_status) -> Result<()> {
    match Status::from_raw(status) {
        None => Ok(()),
        Some(status) => Err(Error { status, message: last_error_message() }),
    }
}

/// A C string for a name or JSON text; a NUL inside is refused as the C API would refuse the value.
pub(crate) fn c_string(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|e| {
        Error::new(Status::InvalidArgument, format!("{what} contains a NUL byte at offset {}", e.nul_position()))
    })
}

/// JSON options where `""` means "the defaults" (NULL in the C API).
pub(crate) fn c_options(what: &str, json: &str) -> Result<Option<CString>> {
    if json.is_empty() { Ok(None) } else { c_string(what, json).map(Some) }
}

/// The pointer to pass for optional JSON options: NULL for `None`.
pub(crate) fn options_ptr(options: &Option<CString>) -> *const c_char {
    options.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

/// A file path as the C API takes it: the path's bytes, as the operating system spells them.
pub(crate) fn c_path(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::new(Status::InvalidArgument, format!("path {} contains a NUL byte", path.display())))
}
