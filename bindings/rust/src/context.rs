//! [`Context`]: the backend, device, thread pool and memory cache that arrays live on and ops run on.

use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::{Error, Result, Status, c_options, check, options_ptr};
use crate::sys;
use crate::text::read_string;

/// A context: the backend and device arrays live on and ops run on, with a thread pool and a memory
/// cache (`nnrt_context`).
///
/// Contexts may be shared between threads (`Send + Sync`); wrap one in an `Arc` or borrow it in
/// scoped threads. Everything made from a context keeps it alive, so dropping the `Context` before
/// its arrays, models or datasets is safe.
pub struct Context {
    handle: Arc<ContextHandle>,
}

/// The caller's reference to a C context, released when the last holder goes: the [`Context`] and
/// the models made from it, which need a context of their own backend and device to lend Rust
/// memory to nnrt ([`Model::predict_into`](crate::Model::predict_into)).
pub(crate) struct ContextHandle(NonNull<sys::nnrt_context>);

// SAFETY: the C API states contexts may be shared between threads.
unsafe impl Send for ContextHandle {}
// SAFETY: as above; every function taking a context is safe to call concurrently.
unsafe impl Sync for ContextHandle {}

impl ContextHandle {
    pub(crate) fn as_raw(&self) -> *mut sys::nnrt_context {
        self.0.as_ptr()
    }
}

impl Drop for ContextHandle {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once, by its last holder; objects made
        // from it hold their own reference inside nnrt.
        unsafe { sys::nnrt_context_release(self.0.as_ptr()) }
    }
}

impl Context {
    /// A context with the default options: the best usable backend, device 0, a thread per CPU.
    pub fn new() -> Result<Context> {
        Context::with_options("")
    }

    /// A context configured by JSON options (`""` for the defaults), e.g.
    /// `{"backend": "reference", "threads": 2, "deterministic": true, "seed": 7}`. The keys are listed
    /// at `nnrt_context_create` in nnrt.h; an unknown key is [`Status::InvalidArgument`].
    pub fn with_options(options_json: &str) -> Result<Context> {
        let options = c_options("options_json", options_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: options is NULL or a valid C string; raw receives the new handle.
        check(unsafe { sys::nnrt_context_create(options_ptr(&options), &mut raw) })?;
        Ok(Context { handle: Arc::new(ContextHandle(non_null(raw, "nnrt_context_create")?)) })
    }

    /// The context as JSON text: version, abi, the selected backend and device, threads, every
    /// usable backend, every plugin found (with the reason one did not load), devices and memory
    /// cache statistics. Parse it with [`json::Value::parse`](crate::json::Value::parse).
    pub fn describe(&self) -> Result<String> {
        // SAFETY: the handle is live and the closure passes read_string's buffer through.
        read_string(|buf, cap, len| unsafe { sys::nnrt_context_describe(self.as_raw(), buf, cap, len) })
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Context` and the models
    /// made from it.
    pub fn as_raw(&self) -> *mut sys::nnrt_context {
        self.handle.as_raw()
    }

    /// A shared reference to the C context, for objects that must call nnrt with it later.
    pub(crate) fn shared(&self) -> Arc<ContextHandle> {
        Arc::clone(&self.handle)
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context").field("raw", &self.handle.0).finish()
    }
}

/// The handle a successful create call wrote. NULL after NNRT_OK would be a library bug, reported
/// as such instead of becoming a dangling wrapper.
pub(crate) fn non_null<T>(raw: *mut T, call: &str) -> Result<NonNull<T>> {
    NonNull::new(raw).ok_or_else(|| Error::new(Status::Internal, format!("{call} returned NNRT_OK but no handle")))
}
