using System;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace Nnrt
{
    /// <summary>An optimizer, its state and the training loop for one model (nnrt_trainer). It updates the
    /// model's parameters in place and keeps the model alive.
    ///
    /// One thread at a time: a second thread calling while one call runs gets InvalidOperationException
    /// (the C API leaves that undefined). <see cref="Cancel"/> is the exception: any thread, any time.</summary>
    public sealed class Trainer : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public TrainerHandle Handle { get; private set; }

        /// <summary>The model this trainer updates.</summary>
        public Model Model { get; private set; }

        // The function pointer nnrt holds comes from this delegate; the field keeps it alive as long as
        // the trainer object, and Fit keeps the trainer object alive while nnrt may call it.
        private readonly Native.ProgressFn trampoline;
        private ProgressCallback callback;
        private Exception callbackError;
        private int busy;

        /// <summary>Creates a trainer. optionsJson (null for the defaults: SGD, learning rate 0.01, batch
        /// size 64) holds "optimizer", "l1", "l2", "weight_decay", "clip_norm", "clip_value", "schedule",
        /// "batch_size", "shuffle", "seed", "prefetch", "workers", "mode", "averaging_frequency",
        /// "report_score_after_averaging", "distributed", "precision", as nnrt.h describes at
        /// nnrt_trainer_create.</summary>
        /// <exception cref="NnrtException">InvalidArgument for bad options or a model without an output
        /// layer; Unsupported for a setting this build cannot do.</exception>
        public Trainer(Model model, string optionsJson = null)
        {
            TrainerHandle handle;
            Check.Ok(Native.nnrt_trainer_create(model.Handle, Utf8.Encode(optionsJson), out handle));
            Handle = handle;
            Model = model;
            trampoline = OnProgress;
        }

        /// <summary>Sets the progress callback (null removes it).</summary>
        public void SetProgress(ProgressCallback progress)
        {
            Enter();
            try
            {
                Check.Ok(Native.nnrt_trainer_set_progress(Handle, progress == null ? null : trampoline, IntPtr.Zero));
                callback = progress;
            }
            finally { Exit(); }
        }

        /// <summary>One optimisation step on a minibatch: x [N, input shape...], y class indices [N] (I32 or
        /// I64) or float targets. Returns the minibatch's mean loss before the update.</summary>
        /// <exception cref="NnrtException">InvalidArgument for labels out of range or a non-finite loss
        /// (parameters unchanged); Shape when x or y does not fit the model.</exception>
        public double Step(NdArray x, NdArray y)
        {
            Enter();
            try
            {
                double loss;
                Check.Ok(Native.nnrt_trainer_step(Handle, x.Handle, y.Handle, out loss));
                return loss;
            }
            finally { Exit(); }
        }

        /// <summary>Trains for `epochs` passes over train, evaluating on validation (may be null) after each.
        /// Returns when training stops by plan: all epochs done, the callback asked to stop, or a
        /// non-finite loss; <see cref="Result"/> says which. Calling it again continues training.</summary>
        /// <exception cref="NnrtException">Cancelled after <see cref="Cancel"/>; InvalidArgument for
        /// epochs &lt; 0 or an empty training set; Shape when the data does not fit the model.</exception>
        public void Fit(Dataset train, Dataset validation, int epochs)
        {
            Enter();
            try
            {
                callbackError = null;
                Status status = validation == null
                    ? Native.nnrt_trainer_fit_no_validation(Handle, train.Handle, IntPtr.Zero, epochs)
                    : Native.nnrt_trainer_fit(Handle, train.Handle, validation.Handle, epochs);
                // Read the message now, before anything else could call nnrt on this thread.
                NnrtException failure = null;
                try { Check.Ok(status); } catch (NnrtException e) { failure = e; }
                var error = callbackError;
                callbackError = null;
                if (error != null) ExceptionDispatchInfo.Capture(error).Throw();
                if (failure != null) throw failure;
            }
            finally
            {
                Exit();
                GC.KeepAlive(this); // the trampoline must outlive every callback of this fit
            }
        }

        /// <summary>Trains without a validation set.</summary>
        public void Fit(Dataset train, int epochs) { Fit(train, null, epochs); }

        /// <summary>The last fit as JSON: "epochs", "iterations", "stop_reason" ("completed", "callback",
        /// "cancelled", "invalid_score", "not_started"), "best_epoch", "best_score", "last_loss",
        /// "examples_per_second" and "history".</summary>
        public string Result()
        {
            Enter();
            try
            {
                return Utf8.Query((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                                  Native.nnrt_trainer_result(Handle, buf, cap, out len));
            }
            finally { Exit(); }
        }

        /// <summary>Saves the model and the optimizer state atomically; <see cref="Model.Load(Context, string)"/> reads the
        /// file too.</summary>
        public void Save(string path)
        {
            Enter();
            try { Check.Ok(Native.nnrt_trainer_save(Handle, Utf8.Encode(path))); }
            finally { Exit(); }
        }

        /// <summary>Restores parameters and training state saved by <see cref="Save"/> (same model config and
        /// optimizer type), so training continues exactly where it stopped. On failure nothing changes.</summary>
        /// <exception cref="NnrtException">InvalidArgument for a file from another model or optimizer;
        /// Io, Corrupt, Version.</exception>
        public void Restore(string path)
        {
            Enter();
            try { Check.Ok(Native.nnrt_trainer_restore(Handle, Utf8.Encode(path))); }
            finally { Exit(); }
        }

        /// <summary>Asks a running <see cref="Fit(Dataset, Dataset, int)"/> to stop after its current minibatch (it then throws
        /// NnrtException with Status.Cancelled). Safe from any thread; before a fit, the next fit stops
        /// at once.</summary>
        public void Cancel() { Check.Ok(Native.nnrt_trainer_cancel(Handle)); }

        /// <summary>This process's rank in distributed training (the "distributed" option); 0 without it.</summary>
        public int Rank
        {
            get
            {
                int rank, world;
                Check.Ok(Native.nnrt_trainer_rank(Handle, out rank, out world));
                return rank;
            }
        }

        /// <summary>The number of ranks training together (the "distributed" option); 1 without it.</summary>
        public int WorldSize
        {
            get
            {
                int rank, world;
                Check.Ok(Native.nnrt_trainer_rank(Handle, out rank, out world));
                return world;
            }
        }

        /// <summary>Releases the trainer (and its reference to the model). A fit running on another thread
        /// is cancelled; the native trainer goes when that fit has returned.</summary>
        public void Dispose()
        {
            if (Volatile.Read(ref busy) != 0 && !Handle.IsClosed)
            {
                try { Cancel(); } catch (ObjectDisposedException) { }
            }
            Handle.Dispose();
        }

        private void Enter()
        {
            if (Interlocked.CompareExchange(ref busy, 1, 0) != 0)
                throw new InvalidOperationException(
                    "the trainer is already in use (by another thread, or by its own progress callback); " +
                    "only Cancel may be called concurrently");
        }

        private void Exit() { Volatile.Write(ref busy, 0); }

        // Runs on the thread inside Fit. Exceptions must not unwind through nnrt's frames: keep the
        // first one, stop training, and let Fit rethrow it.
        private int OnProgress(IntPtr progress, IntPtr user)
        {
            var handler = callback;
            if (handler == null) return 0;
            try
            {
                return handler(new Progress(progress)) ? 1 : 0;
            }
            catch (Exception e)
            {
                callbackError = e;
                return 1;
            }
        }
    }
}
