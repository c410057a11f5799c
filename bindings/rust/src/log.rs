//! nnrt's log messages, sent to a Rust closure instead of stderr.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, RwLock};

use crate::sys;

/// The level of a log message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Details for debugging nnrt.
    Debug,
    /// What nnrt is doing, such as the backend it selected.
    Info,
    /// Something that may be wrong, such as a plugin that did not load.
    Warn,
    /// A failure.
    Error,
}

impl LogLevel {
    fn raw(self) -> c_int {
        match self {
            LogLevel::Debug => sys::NNRT_LOG_DEBUG,
            LogLevel::Info => sys::NNRT_LOG_INFO,
            LogLevel::Warn => sys::NNRT_LOG_WARN,
            LogLevel::Error => sys::NNRT_LOG_ERROR,
        }
    }

    /// Levels outside the known ones are clamped, as nnrt clamps them.
    fn from_raw(raw: c_int) -> LogLevel {
        match raw {
            i32::MIN..=sys::NNRT_LOG_DEBUG => LogLevel::Debug,
            sys::NNRT_LOG_INFO => LogLevel::Info,
            sys::NNRT_LOG_WARN => LogLevel::Warn,
            _ => LogLevel::Error,
        }
    }
}

type Logger = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// The closure the trampoline calls. nnrt is given a static function and no user pointer, so
/// replacing the closure never frees one that another thread is still running: that thread holds
/// its own Arc.
static LOGGER: RwLock<Option<Logger>> = RwLock::new(None);

/// Sends nnrt's log messages of level `min_level` and above to `logger`, process-wide, instead of
/// stderr. The logger may be called from any thread nnrt runs on, and must not call back into nnrt.
/// A panic in it is caught and the message dropped, since it cannot unwind through nnrt.
pub fn set_log_callback<F>(min_level: LogLevel, logger: F)
where
    F: Fn(LogLevel, &str) + Send + Sync + 'static,
{
    *LOGGER.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Arc::new(logger));
    // SAFETY: the trampoline is a static function and ignores the user pointer.
    unsafe { sys::nnrt_set_log_callback(Some(log_trampoline), std::ptr::null_mut(), min_level.raw()) }
}

/// Restores nnrt's default logging: lines on stderr, of level `min_level` and above.
pub fn reset_log_callback(min_level: LogLevel) {
    // SAFETY: NULL restores the default.
    unsafe { sys::nnrt_set_log_callback(None, std::ptr::null_mut(), min_level.raw()) }
    *LOGGER.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
}

unsafe extern "C" fn log_trampoline(level: c_int, message: *const c_char, _user: *mut c_void) {
    if message.is_null() {
        return;
    }
    // Clone the Arc and let go of the lock before calling, so a logger that runs long never blocks
    // set_log_callback.
    let logger = match LOGGER.read() {
        Ok(guard) => guard.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    let Some(logger) = logger else { return };
    // SAFETY: nnrt passes a NUL-terminated message valid for the duration of the call.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    let _ = catch_unwind(AssertUnwindSafe(|| logger(LogLevel::from_raw(level), &text)));
}
