using System;
using System.Threading;

namespace Nnrt
{
    /// <summary>Cancellation, a timeout and an abort callback for the calls that can run long
    /// (nnrt_run_options), passed to the overloads of Model.Predict, PredictMany, PredictInto, Evaluate, Load
    /// and ImportOnnx that take them. A stopped call throws
    /// <see cref="NnrtException"/> with <see cref="Status.Cancelled"/> or <see cref="Status.DeadlineExceeded"/>,
    /// gives no output and leaves the model as it was.
    ///
    /// One RunOptions may serve any number of calls on any threads at once, and every member may be
    /// called from any thread while they run: <see cref="Cancel"/> from another thread stops them.
    /// Disposing it while calls run is safe: the native options are released when the last has
    /// returned.</summary>
    public sealed class RunOptions : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public RunOptionsHandle Handle { get; private set; }

        private double timeoutSeconds;
        private volatile Func<bool> abort;

        // The one delegate handed to nnrt for these options, a field so that it lives as long as this
        // object (which every call running with the options keeps reachable); it forwards to the
        // current `abort`, so replacing the callback never frees a thunk a running call may call.
        private readonly Native.AbortFn trampoline;

        // The exception an abort callback threw during the current call on this thread (the callback
        // runs on the thread making the call), to become the InnerException of the call's error.
        [ThreadStatic] private static Exception thrownOnThisThread;

        /// <summary>Creates run options: not cancelled, no timeout, no abort callback.</summary>
        public RunOptions()
        {
            Library.EnsureCompatible();
            RunOptionsHandle handle;
            Check.Ok(Native.nnrt_run_options_create(out handle));
            Handle = handle;
            trampoline = OnAbort;
        }

        /// <summary>Creates run options with a timeout in seconds (0: none) and an abort callback (null: none).</summary>
        public RunOptions(double timeoutSeconds, Func<bool> abort = null) : this()
        {
            TimeoutSeconds = timeoutSeconds;
            Abort = abort;
        }

        /// <summary>Cancels every call running with these options, and every later one, until
        /// <see cref="Reset"/>: each throws <see cref="Status.Cancelled"/> at its next check (before its next
        /// op). Safe from any thread, and from the abort callback.</summary>
        public void Cancel() { Check.Ok(Native.nnrt_run_options_cancel(Handle)); }

        /// <summary>Clears a cancellation, so that later calls run again (a stopped call stays stopped).</summary>
        public void Reset() { Check.Ok(Native.nnrt_run_options_reset(Handle)); }

        /// <summary>The time each call gets, in seconds, counted from its start (0: no limit); a call past it
        /// throws <see cref="Status.DeadlineExceeded"/> at its next check. Calls already running keep the
        /// limit they started with.</summary>
        /// <exception cref="NnrtException">InvalidArgument for a negative or non-finite value.</exception>
        public double TimeoutSeconds
        {
            get { return Volatile.Read(ref timeoutSeconds); }
            set
            {
                Check.Ok(Native.nnrt_run_options_set_timeout(Handle, value));
                Volatile.Write(ref timeoutSeconds, value);
            }
        }

        /// <summary><see cref="TimeoutSeconds"/> as a TimeSpan; null for no limit (TimeSpan counts whole
        /// 100 ns ticks: use TimeoutSeconds for less).</summary>
        public TimeSpan? Timeout
        {
            get
            {
                double seconds = TimeoutSeconds;
                return seconds == 0 ? (TimeSpan?)null : TimeSpan.FromTicks((long)Math.Round(seconds * TimeSpan.TicksPerSecond));
            }
            set { TimeoutSeconds = value.HasValue ? value.Value.Ticks / (double)TimeSpan.TicksPerSecond : 0; }
        }

        /// <summary>The abort callback, or null: asked before every op and stage of a call running with these
        /// options, on the thread making the call; returning true stops the call with
        /// <see cref="Status.Cancelled"/>. An exception it throws stops the call too, and becomes the
        /// InnerException of the call's NnrtException. It must not call nnrt (<see cref="Cancel"/>
        /// excepted) and should be quick: it runs very often. Set it before starting calls.</summary>
        public Func<bool> Abort
        {
            get { return abort; }
            set
            {
                abort = value;
                Check.Ok(Native.nnrt_run_options_set_abort_callback(Handle, value == null ? null : trampoline, IntPtr.Zero));
            }
        }

        private int OnAbort(IntPtr user)
        {
            var fn = abort;
            if (fn == null) return 0;
            try
            {
                return fn() ? 1 : 0;
            }
            catch (Exception e)
            {
                // It cannot cross the native frames: it stops the call, and Finish rethrows it inside the
                // call's exception.
                if (thrownOnThisThread == null) thrownOnThisThread = e;
                return 1;
            }
        }

        /// <summary>Prepares this thread for a call with options (which may be null).</summary>
        internal static void Begin(RunOptions options)
        {
            if (options != null) thrownOnThisThread = null;
        }

        /// <summary>Throws for the status of a call made with options (null: a call without), right after it
        /// on the same thread: as <see cref="Check.Ok"/>, with the abort callback's exception inside.</summary>
        internal static void Finish(RunOptions options, Status status)
        {
            Exception thrown = thrownOnThisThread;
            thrownOnThisThread = null;
            GC.KeepAlive(options); // and so its trampoline, until the call has returned
            if (status == Status.Ok) return;
            string message = Utf8.Decode(Native.nnrt_last_error());
            if (thrown != null && status == Status.Cancelled)
                throw new NnrtException(status, message + " (the abort callback threw " + thrown.GetType().Name + ": " +
                                        thrown.Message + ")", thrown);
            throw new NnrtException(status, message);
        }

        /// <summary>Releases these options (once every call running with them has returned).</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
