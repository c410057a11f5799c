//! [`Trainer`]: an optimizer, its state and the training loop; and [`CancelHandle`], which stops a
//! running fit from another thread.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::panic::resume_unwind;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::array::Array;
use crate::context::non_null;
use crate::dataset::Dataset;
use crate::error::{Result, c_options, c_path, check, options_ptr};
use crate::model::Model;
use crate::progress::{Progress, ProgressSlot, progress_trampoline};
use crate::sys;
use crate::text::read_string;

/// The C trainer, shared by the [`Trainer`] and its [`CancelHandle`]s and released when the last of
/// them goes. Through shared references only `nnrt_trainer_cancel` is ever called on it; every other
/// call goes through the `Trainer`, which is not `Sync` and takes `&mut self` to train, so the rule
/// "one thread at a time, cancel excepted" holds.
struct TrainerHandle(NonNull<sys::nnrt_trainer>);

// SAFETY: a trainer is not tied to a thread, and the only call made through a shared reference,
// nnrt_trainer_cancel, is safe from any thread.
unsafe impl Send for TrainerHandle {}
// SAFETY: as above.
unsafe impl Sync for TrainerHandle {}

impl Drop for TrainerHandle {
    fn drop(&mut self) {
        // SAFETY: the last owner releases the handle once. No fit can be running: fit borrows the
        // Trainer, which holds a reference, so the last reference goes only after fit returned, as
        // nnrt_trainer_release requires.
        unsafe { sys::nnrt_trainer_release(self.0.as_ptr()) }
    }
}

/// An optimizer, its state and the training loop for one model (`nnrt_trainer`).
///
/// A trainer is used by one thread at a time: it may move between threads (`Send`) but not be
/// shared (`!Sync`), and the calls that train take `&mut self`. To stop a running
/// [`fit`](Trainer::fit) from another thread, take a [`CancelHandle`] first. The trainer keeps its
/// model alive, so dropping the [`Model`] first is safe.
///
/// Sharing a trainer between threads does not compile:
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<nnrt::Trainer>();
/// ```
pub struct Trainer {
    handle: Arc<TrainerHandle>,
    /// The registered progress closure, owned here as a raw Box pointer because nnrt holds the same
    /// pointer and writes through it during fit.
    progress: Option<NonNull<ProgressSlot>>,
    /// Opts out of Sync (a Cell is Send but not Sync).
    _one_thread_at_a_time: PhantomData<Cell<()>>,
}

// SAFETY: the handle is Send, and the progress closure is required to be Send.
unsafe impl Send for Trainer {}

impl Trainer {
    /// A trainer for `model`, configured by JSON options (`""` for the defaults: SGD with learning
    /// rate 0.01, batches of 64), e.g. `{"optimizer": {"type": "adam", "learning_rate": 0.001},
    /// "batch_size": 32, "seed": 1}`. The keys are listed at `nnrt_trainer_create` in nnrt.h.
    pub fn new(model: &Model, options_json: &str) -> Result<Trainer> {
        let options = c_options("options_json", options_json)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the model is live; options is NULL or a valid C string; raw receives the trainer.
        check(unsafe { sys::nnrt_trainer_create(model.as_raw(), options_ptr(&options), &mut raw) })?;
        let handle = TrainerHandle(non_null(raw, "nnrt_trainer_create")?);
        Ok(Trainer { handle: Arc::new(handle), progress: None, _one_thread_at_a_time: PhantomData })
    }

    /// Calls `callback` after every minibatch of [`fit`](Trainer::fit) and once more after every
    /// epoch, on the thread running fit. Returning `ControlFlow::Break(())` stops training (fit then
    /// returns `Ok` with stop reason "callback"). A panic in the callback stops training and
    /// resumes when fit returns. Replaces any earlier callback.
    pub fn set_progress<F>(&mut self, callback: F) -> Result<()>
    where
        F: FnMut(&Progress) -> ControlFlow<()> + Send + 'static,
    {
        let slot = NonNull::from(Box::leak(Box::new(ProgressSlot::new(Box::new(callback)))));
        // SAFETY: the handle is live; the slot stays allocated until replaced or the trainer drops.
        let status =
            unsafe { sys::nnrt_trainer_set_progress(self.raw(), Some(progress_trampoline), slot.as_ptr().cast()) };
        if let Err(e) = check(status) {
            // SAFETY: nnrt refused the pointer, so it is ours alone again.
            drop(unsafe { Box::from_raw(slot.as_ptr()) });
            return Err(e);
        }
        self.free_progress_slot();
        self.progress = Some(slot);
        Ok(())
    }

    /// Removes the progress callback.
    pub fn clear_progress(&mut self) -> Result<()> {
        // SAFETY: the handle is live; NULL removes the callback.
        check(unsafe { sys::nnrt_trainer_set_progress(self.raw(), None, std::ptr::null_mut()) })?;
        self.free_progress_slot();
        Ok(())
    }

    /// One optimisation step on a minibatch: `x` shaped `[N, <input shape>]`, `y` class indices
    /// `[N]` (I32 or I64) or float targets `[N, <output shape>]`. Returns the minibatch's mean loss
    /// before the update. A non-finite loss is [`Status::InvalidArgument`](crate::Status) and leaves
    /// the parameters unchanged.
    pub fn step(&mut self, x: &Array, y: &Array) -> Result<f64> {
        let mut loss = 0.0;
        // SAFETY: all handles are live; loss is a valid out-parameter.
        check(unsafe { sys::nnrt_trainer_step(self.raw(), x.as_raw(), y.as_raw(), &mut loss) })?;
        Ok(loss)
    }

    /// Trains for `epochs` passes over `train`, evaluating on `validation` after each epoch and
    /// calling the progress callback. Returns `Ok` when training stops by plan (all epochs done, the
    /// callback, a non-finite loss; [`result`](Trainer::result) says which) and
    /// [`Status::Cancelled`](crate::Status::Cancelled) after a cancel. Calling fit again continues
    /// where training stopped.
    pub fn fit(&mut self, train: &Dataset, validation: Option<&Dataset>, epochs: i32) -> Result<()> {
        let validation = validation.map_or(std::ptr::null_mut(), Dataset::as_raw);
        // SAFETY: all handles are live for the call; the progress slot, if any, is ours and untouched
        // by Rust code until fit returns.
        let status = unsafe { sys::nnrt_trainer_fit(self.raw(), train.as_raw(), validation, epochs) };
        let outcome = check(status);
        if let Some(slot) = self.progress {
            // SAFETY: fit has returned, so nnrt no longer uses the slot.
            if let Some(panic) = unsafe { &mut *slot.as_ptr() }.take_panic() {
                resume_unwind(panic);
            }
        }
        outcome
    }

    /// The last fit as JSON: "epochs", "iterations", "stop_reason" (such as "completed",
    /// "callback", "cancelled", "invalid_score" or "not_started"), "best_epoch", "best_score",
    /// "last_loss", "examples_per_second" and a per-epoch "history".
    pub fn result(&self) -> Result<String> {
        // SAFETY: the handle is live and the closure passes read_string's buffer through.
        read_string(|buf, cap, len| unsafe { sys::nnrt_trainer_result(self.raw(), buf, cap, len) })
    }

    /// Saves the model and the training state (optimizer state, epochs, steps, seeds, history) to
    /// one file, atomically. [`Model::load`] reads it too.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        // SAFETY: the handle is live; path is a valid C string.
        check(unsafe { sys::nnrt_trainer_save(self.raw(), path.as_ptr()) })
    }

    /// Restores parameters and training state saved by [`save`](Trainer::save) from the same model
    /// config and optimizer type, so training continues exactly where it stopped. On failure the
    /// trainer and model are unchanged.
    pub fn restore(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        // SAFETY: the handle is live; path is a valid C string.
        check(unsafe { sys::nnrt_trainer_restore(self.raw(), path.as_ptr()) })
    }

    /// Asks the next or running fit to stop after its current minibatch. From another thread, use a
    /// [`CancelHandle`].
    pub fn cancel(&self) -> Result<()> {
        cancel(&self.handle)
    }

    /// This process's rank and the world size in distributed training (the `"distributed"` option);
    /// `(0, 1)` without it.
    pub fn rank(&self) -> Result<(i32, i32)> {
        let (mut rank, mut world) = (0i32, 0i32);
        // SAFETY: the handle is live for `self`'s lifetime; both out-pointers are valid.
        check(unsafe { sys::nnrt_trainer_rank(self.raw(), &mut rank, &mut world) })?;
        Ok((rank, world))
    }

    /// A handle that cancels this trainer's fit from any thread. It keeps the C trainer alive, so it
    /// may outlive the `Trainer`; cancelling then does nothing harmful.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle { handle: Arc::clone(&self.handle) }
    }

    /// The raw handle, for calls through [`sys`]. It stays owned by this `Trainer`.
    pub fn as_raw(&self) -> *mut sys::nnrt_trainer {
        self.raw()
    }

    fn raw(&self) -> *mut sys::nnrt_trainer {
        self.handle.0.as_ptr()
    }

    fn free_progress_slot(&mut self) {
        if let Some(slot) = self.progress.take() {
            // SAFETY: nnrt no longer holds this pointer (it was replaced or removed) and no fit runs.
            drop(unsafe { Box::from_raw(slot.as_ptr()) });
        }
    }
}

impl Drop for Trainer {
    fn drop(&mut self) {
        if self.progress.is_some() {
            // A CancelHandle may keep the C trainer alive after this; it must not keep a pointer to
            // the closure freed below.
            // SAFETY: the handle is live; NULL removes the callback.
            unsafe { sys::nnrt_trainer_set_progress(self.raw(), None, std::ptr::null_mut()) };
            self.free_progress_slot();
        }
    }
}

impl fmt::Debug for Trainer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trainer").field("raw", &self.handle.0).finish()
    }
}

/// Cancels a [`Trainer`]'s fit from any thread (`Send + Sync`, `Clone`): the running fit stops after
/// its current minibatch and returns [`Status::Cancelled`](crate::Status::Cancelled); a cancel before
/// fit starts makes the next fit stop at once.
///
/// ```no_run
/// # fn main() -> nnrt::Result<()> {
/// # let ctx = nnrt::Context::new()?;
/// # let config = r#"{"input": [2], "layers": [{"type": "output", "units": 2, "loss": "nll"}]}"#;
/// # let model = nnrt::Model::new(&ctx, config)?;
/// # let data = nnrt::Dataset::load(&ctx, r#"{"format": "csv", "path": "data.csv"}"#)?;
/// let mut trainer = nnrt::Trainer::new(&model, "")?;
/// let cancel = trainer.cancel_handle();
/// std::thread::spawn(move || {
///     std::thread::sleep(std::time::Duration::from_secs(5));
///     cancel.cancel().ok();
/// });
/// match trainer.fit(&data, None, 1000) {
///     Err(e) if e.status() == nnrt::Status::Cancelled => println!("stopped after 5 s"),
///     other => other?,
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct CancelHandle {
    handle: Arc<TrainerHandle>,
}

impl CancelHandle {
    /// Asks the trainer's running (or next) fit to stop after its current minibatch.
    pub fn cancel(&self) -> Result<()> {
        cancel(&self.handle)
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle").field("raw", &self.handle.0).finish()
    }
}

fn cancel(handle: &TrainerHandle) -> Result<()> {
    // SAFETY: the handle is live (the Arc keeps it) and cancel is safe from any thread.
    check(unsafe { sys::nnrt_trainer_cancel(handle.0.as_ptr()) })
}
