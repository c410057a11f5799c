//! Progress reports during [`Trainer::fit`](crate::Trainer::fit), and the bridge that lets a Rust
//! closure be nnrt's C progress callback.

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::mem::{offset_of, size_of};
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::sys;

/// What the progress callback receives after every minibatch, and once more after every epoch
/// (`epoch_end`, with the validation score).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// 0-based epoch.
    pub epoch: i32,
    /// Minibatches so far, over all epochs.
    pub iteration: i64,
    /// Examples seen so far, over all epochs.
    pub examples_seen: i64,
    /// The loss of the last minibatch.
    pub loss: f64,
    /// The learning rate used for the last minibatch.
    pub learning_rate: f64,
    /// Throughput over the current epoch so far.
    pub examples_per_second: f64,
    /// True on the call after an epoch, when `validation_score` is filled in.
    pub epoch_end: bool,
    /// The validation metric after an epoch (accuracy for class labels, else the negated MSE);
    /// `None` without a validation set or before the epoch ends.
    pub validation_score: Option<f64>,
    /// Minibatches in one epoch; `None` from a library too old to report it.
    pub batches_per_epoch: Option<i64>,
    /// 0-based minibatch within the epoch; `None` from a library too old to report it.
    pub batch: Option<i64>,
    /// The training device's load (a GPU whose backend reads NVML), sampled at most about once a
    /// second; `None` on a CPU, without NVML, or from a library too old to report it.
    pub device: Option<DeviceLoad>,
}

/// A GPU's load during training, as NVML reports it; a member is `None` when NVML did not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceLoad {
    /// Utilization in percent over the last sample period.
    pub utilization_percent: Option<i32>,
    /// Temperature in degrees Celsius.
    pub temperature_celsius: Option<i32>,
    /// Memory in use by every process on the device.
    pub memory_used_bytes: Option<i64>,
    /// The device's memory.
    pub memory_total_bytes: Option<i64>,
}

impl DeviceLoad {
    /// The device members of a report whose struct has them; `None` when all are unknown (-1).
    fn from_raw(p: &sys::nnrt_progress) -> Option<DeviceLoad> {
        let known32 = |v: i32| (v >= 0).then_some(v);
        let known64 = |v: i64| (v >= 0).then_some(v);
        let load = DeviceLoad {
            utilization_percent: known32(p.device_utilization_percent),
            temperature_celsius: known32(p.device_temperature_celsius),
            memory_used_bytes: known64(p.device_memory_used_bytes),
            memory_total_bytes: known64(p.device_memory_total_bytes),
        };
        let any_known = load.utilization_percent.is_some()
            || load.temperature_celsius.is_some()
            || load.memory_used_bytes.is_some()
            || load.memory_total_bytes.is_some();
        any_known.then_some(load)
    }
}

impl Progress {
    /// Copies a C report, reading the members added after the first version only when the
    /// library's `struct_size` says it filled them in.
    fn from_raw(p: &sys::nnrt_progress) -> Progress {
        let filled = |end: usize| p.struct_size as usize >= end;
        Progress {
            epoch: p.epoch,
            iteration: p.iteration,
            examples_seen: p.examples_seen,
            loss: p.loss,
            learning_rate: p.learning_rate,
            examples_per_second: p.examples_per_second,
            epoch_end: p.epoch_end != 0,
            validation_score: if p.validation_score.is_nan() { None } else { Some(p.validation_score) },
            batches_per_epoch: filled(offset_of!(sys::nnrt_progress, batches_per_epoch) + size_of::<i64>())
                .then_some(p.batches_per_epoch),
            batch: filled(offset_of!(sys::nnrt_progress, batch) + size_of::<i64>()).then_some(p.batch),
            device: if filled(size_of::<sys::nnrt_progress>()) { DeviceLoad::from_raw(p) } else { None },
        }
    }
}

/// A boxed progress closure, as the trainer keeps it.
pub(crate) type ProgressCallback = Box<dyn FnMut(&Progress) -> ControlFlow<()> + Send>;

/// The closure the trainer calls, and a panic it raised, kept until `fit` returns so the panic
/// resumes on the caller's side of the FFI boundary instead of unwinding through C++.
pub(crate) struct ProgressSlot {
    callback: ProgressCallback,
    panic: Option<Box<dyn Any + Send>>,
}

impl ProgressSlot {
    pub(crate) fn new(callback: ProgressCallback) -> ProgressSlot {
        ProgressSlot { callback, panic: None }
    }

    /// The panic the closure raised during the last fit, if any.
    pub(crate) fn take_panic(&mut self) -> Option<Box<dyn Any + Send>> {
        self.panic.take()
    }
}

/// The C progress callback: `user` is the trainer's `ProgressSlot`. A panic stops training (nonzero)
/// and is kept for `fit` to resume.
pub(crate) unsafe extern "C" fn progress_trampoline(p: *const sys::nnrt_progress, user: *mut c_void) -> c_int {
    // SAFETY: the trainer registered a pointer to its live ProgressSlot, and fit (which holds the
    // trainer exclusively) is the only caller, on its own thread.
    let slot = unsafe { &mut *user.cast::<ProgressSlot>() };
    // SAFETY: nnrt passes a report valid for the duration of the call.
    let Some(report) = (unsafe { p.as_ref() }) else { return 0 };
    if slot.panic.is_some() {
        return 1;
    }
    let progress = Progress::from_raw(report);
    match catch_unwind(AssertUnwindSafe(|| (slot.callback)(&progress))) {
        Ok(ControlFlow::Continue(())) => 0,
        Ok(ControlFlow::Break(())) => 1,
        Err(panic) => {
            slot.panic = Some(panic);
            1
        }
    }
}
