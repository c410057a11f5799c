//! [`RunOptions`]: cancellation, a timeout and an abort callback for the calls that can run long.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr::NonNull;
use std::time::Duration;

use crate::context::non_null;
use crate::error::{Result, check};
use crate::sys;

/// Run options (`nnrt_run_options`): stop the calls that can run long (the `*_with` variants of
/// [`Model::predict`](crate::Model::predict), [`predict_into`](crate::Model::predict_into),
/// [`evaluate`](crate::Model::evaluate), [`load`](crate::Model::load) and
/// [`import_onnx`](crate::Model::import_onnx)) from another thread, or after a time limit.
///
/// A stopped call returns [`Status::Cancelled`](crate::Status::Cancelled) or [`Status::DeadlineExceeded`](crate::Status::DeadlineExceeded) as soon as the op
/// running then has finished, gives no output and leaves the model usable at once. One set of
/// options may be passed to any number of calls on any threads at once (`Send + Sync`), and
/// [`cancel`](RunOptions::cancel), [`reset`](RunOptions::reset) and
/// [`set_timeout`](RunOptions::set_timeout) take `&self`, so another thread may call them while
/// those calls run: share the options by reference in scoped threads, or in an `Arc`.
///
/// ```
/// # fn main() -> nnrt::Result<()> {
/// let ctx = nnrt::Context::with_options(r#"{"threads": 1}"#)?;
/// let model = nnrt::Model::new(&ctx, r#"{"input": [2], "layers": [{"type": "output", "units": 2, "loss": "nll"}]}"#)?;
/// let x = nnrt::Array::from_slice(&ctx, &[1, 2], &[0.5f32, -0.5])?;
/// let options = nnrt::RunOptions::new()?;
/// options.cancel()?;
/// assert_eq!(model.predict_with(&x, &options).unwrap_err().status(), nnrt::Status::Cancelled);
/// options.reset()?;
/// assert_eq!(model.predict_with(&x, &options)?.shape()?, [1, 2]);
/// # Ok(())
/// # }
/// ```
pub struct RunOptions {
    raw: NonNull<sys::nnrt_run_options>,
    /// The abort callback nnrt holds a pointer to, owned here as a raw Box pointer.
    abort: Option<NonNull<AbortSlot>>,
}

// SAFETY: the C API states run options may be shared between threads and every function on them is
// safe to call from any thread while calls run with them; the abort callback is Send + Sync.
unsafe impl Send for RunOptions {}
// SAFETY: as above. The only calls taking `&mut self` (set_abort_callback) or ownership (drop)
// cannot overlap a call running with the options, which borrows them.
unsafe impl Sync for RunOptions {}

type AbortFn = dyn Fn() -> bool + Send + Sync;

struct AbortSlot {
    callback: Box<AbortFn>,
}

thread_local! {
    /// A panic of an abort callback, caught in the trampoline and raised again on this thread (the
    /// callback runs on the thread that made the call) once the call has returned.
    static ABORT_PANIC: RefCell<Option<Box<dyn std::any::Any + Send>>> = const { RefCell::new(None) };
}

unsafe extern "C" fn abort_trampoline(user: *mut c_void) -> c_int {
    // SAFETY: user is the AbortSlot registered with these options; it stays allocated until the
    // callback is replaced or the options dropped, neither of which can happen while a call runs.
    let slot = unsafe { &*user.cast::<AbortSlot>() };
    match catch_unwind(AssertUnwindSafe(|| (slot.callback)())) {
        Ok(stop) => c_int::from(stop),
        Err(panic) => {
            ABORT_PANIC.with(|p| {
                p.borrow_mut().get_or_insert(panic);
            });
            1
        }
    }
}

/// Raises again, on the calling thread, a panic an abort callback had during the call that just
/// returned. Called after every call that takes run options.
pub(crate) fn resume_abort_panic() {
    if let Some(panic) = ABORT_PANIC.with(|p| p.borrow_mut().take()) {
        resume_unwind(panic);
    }
}

impl RunOptions {
    /// Options that never stop a call: not cancelled, no timeout, no abort callback.
    pub fn new() -> Result<RunOptions> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: raw receives the new handle.
        check(unsafe { sys::nnrt_run_options_create(&mut raw) })?;
        Ok(RunOptions { raw: non_null(raw, "nnrt_run_options_create")?, abort: None })
    }

    /// Cancels every call running with these options, and every later one until
    /// [`reset`](RunOptions::reset): each returns [`Status::Cancelled`](crate::Status::Cancelled) at its next check. Safe from
    /// any thread, also from an abort callback.
    pub fn cancel(&self) -> Result<()> {
        // SAFETY: the handle is live; the call is safe from any thread.
        check(unsafe { sys::nnrt_run_options_cancel(self.raw.as_ptr()) })
    }

    /// Clears a cancellation, so that later calls run again (a call stopped already stays stopped).
    pub fn reset(&self) -> Result<()> {
        // SAFETY: the handle is live; the call is safe from any thread.
        check(unsafe { sys::nnrt_run_options_reset(self.raw.as_ptr()) })
    }

    /// Gives each later call run with these options at most `timeout`, counted from the call's start
    /// on a monotonic clock; past it the call returns [`Status::DeadlineExceeded`](crate::Status::DeadlineExceeded). `None` removes
    /// the limit. Calls already running keep the limit they started with.
    pub fn set_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        let seconds = match timeout {
            None => 0.0,
            // 0 would mean "no limit" to nnrt; a zero duration means no time at all: one nanosecond.
            Some(d) if d.is_zero() => 1e-9,
            Some(d) => d.as_secs_f64(),
        };
        // SAFETY: the handle is live; seconds is finite and not negative.
        check(unsafe { sys::nnrt_run_options_set_timeout(self.raw.as_ptr(), seconds) })
    }

    /// Calls `callback` before each op and stage of every call run with these options, on the
    /// thread that made the call (so possibly on several threads at once); returning `true` stops
    /// that call with [`Status::Cancelled`](crate::Status::Cancelled). The callback must not call nnrt (other than
    /// [`cancel`](RunOptions::cancel) on other options). A panic in it stops the call and resumes on
    /// the caller once the call returns. Replaces any earlier callback; `&mut self` makes sure no
    /// call runs with the options meanwhile.
    pub fn set_abort_callback<F>(&mut self, callback: F) -> Result<()>
    where
        F: Fn() -> bool + Send + Sync + 'static,
    {
        let slot = NonNull::from(Box::leak(Box::new(AbortSlot { callback: Box::new(callback) })));
        // SAFETY: the handle is live; the slot stays allocated until replaced or the options drop.
        let status = unsafe {
            sys::nnrt_run_options_set_abort_callback(self.raw.as_ptr(), Some(abort_trampoline), slot.as_ptr().cast())
        };
        if let Err(e) = check(status) {
            // SAFETY: nnrt refused the pointer, so it is ours alone again.
            drop(unsafe { Box::from_raw(slot.as_ptr()) });
            return Err(e);
        }
        self.free_abort_slot();
        self.abort = Some(slot);
        Ok(())
    }

    /// Removes the abort callback.
    pub fn clear_abort_callback(&mut self) -> Result<()> {
        // SAFETY: the handle is live; NULL removes the callback.
        check(unsafe { sys::nnrt_run_options_set_abort_callback(self.raw.as_ptr(), None, std::ptr::null_mut()) })?;
        self.free_abort_slot();
        Ok(())
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by these `RunOptions`.
    pub fn as_raw(&self) -> *mut sys::nnrt_run_options {
        self.raw.as_ptr()
    }

    fn free_abort_slot(&mut self) {
        if let Some(slot) = self.abort.take() {
            // SAFETY: nnrt no longer holds this pointer (replaced or removed above, or the options
            // are released), and no call runs with the options (we have `&mut self`).
            drop(unsafe { Box::from_raw(slot.as_ptr()) });
        }
    }
}

impl Drop for RunOptions {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once; no call runs with the options, which
        // every such call borrows.
        unsafe { sys::nnrt_run_options_release(self.raw.as_ptr()) }
        self.free_abort_slot();
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions").field("raw", &self.raw).field("abort_callback", &self.abort.is_some()).finish()
    }
}

/// The pointer to pass for optional run options: NULL for `None`.
pub(crate) fn run_options_ptr(options: Option<&RunOptions>) -> *const sys::nnrt_run_options {
    options.map_or(std::ptr::null(), |o| o.raw.as_ptr().cast_const())
}
