// One SafeHandle per nnrt handle type. A SafeHandle gives three things the wrappers rely on:
// release exactly once (Dispose or the critical finalizer, whichever comes first), a reference
// count held by the marshaler around every P/Invoke (so a Dispose on another thread waits for
// running calls instead of freeing under them), and ObjectDisposedException instead of undefined
// behaviour when a disposed object is used.
//
// Release order between handles does not matter: the C library keeps alive what an object depends
// on (an array its context, a trainer its model), so finalizers may run in any order too.
using System;
using System.Runtime.InteropServices;

namespace Nnrt
{
    /// <summary>Base of the handle types: an owned pointer, invalid when NULL.</summary>
    public abstract class NnrtHandle : SafeHandle
    {
        /// <summary>Creates an empty (invalid) handle; the marshaler fills it from an out-parameter.</summary>
        protected NnrtHandle() : base(IntPtr.Zero, true) { }

        /// <summary>Takes ownership of a pointer returned by the library.</summary>
        protected NnrtHandle(IntPtr owned) : base(IntPtr.Zero, true) { SetHandle(owned); }

        /// <summary>True for NULL: nothing to release.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        /// <summary>Calls the type's nnrt_X_release.</summary>
        protected abstract void Free(IntPtr pointer);

        /// <summary>Releases the pointer. Never throws: it also runs on the finalizer thread, where an
        /// exception would end the process. The release functions themselves cannot fail.</summary>
        protected sealed override bool ReleaseHandle()
        {
            try
            {
                Free(handle);
                return true;
            }
            catch (Exception)
            {
                return false; // only if the library itself became unusable; nothing is left to do
            }
        }
    }

    /// <summary>An owned nnrt_context*.</summary>
    public sealed class ContextHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public ContextHandle() { }
        /// <summary>nnrt_context_release: arrays and models made from it keep it alive.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_context_release(p); }
    }

    /// <summary>An owned nnrt_array*.</summary>
    public sealed class ArrayHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public ArrayHandle() { }
        /// <summary>Takes ownership of an array pointer (nnrt_op's outputs come back as raw pointers).</summary>
        internal ArrayHandle(IntPtr owned) : base(owned) { }
        /// <summary>nnrt_array_release.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_array_release(p); }
    }

    /// <summary>An owned nnrt_model*.</summary>
    public sealed class ModelHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public ModelHandle() { }
        /// <summary>nnrt_model_release: a trainer of the model keeps it alive.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_model_release(p); }
    }

    /// <summary>An owned nnrt_dataset*.</summary>
    public sealed class DatasetHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public DatasetHandle() { }
        /// <summary>nnrt_dataset_release.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_dataset_release(p); }
    }

    /// <summary>An owned nnrt_trainer*.</summary>
    public sealed class TrainerHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public TrainerHandle() { }
        /// <summary>nnrt_trainer_release, which must not race with a running fit: the marshaler's
        /// reference count defers this until every call on the trainer has returned.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_trainer_release(p); }
    }

    /// <summary>An owned nnrt_run_options*.</summary>
    public sealed class RunOptionsHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public RunOptionsHandle() { }
        /// <summary>nnrt_run_options_release, which must not race with a call running with the options:
        /// the marshaler's reference count defers this until every such call has returned.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_run_options_release(p); }
    }

    /// <summary>An owned nnrt_evaluation*.</summary>
    public sealed class EvaluationHandle : NnrtHandle
    {
        /// <summary>An empty handle, filled in by the marshaler.</summary>
        public EvaluationHandle() { }
        /// <summary>nnrt_evaluation_release.</summary>
        protected override void Free(IntPtr p) { Native.nnrt_evaluation_release(p); }
    }
}
