using System;

namespace Nnrt
{
    /// <summary>A backend and device that arrays live on and ops run on, with a thread pool and a memory
    /// cache (nnrt_context). Safe to share between threads. Disposing it while arrays, models or
    /// datasets made from it are still in use is fine: they keep the native context alive.</summary>
    public sealed class Context : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public ContextHandle Handle { get; private set; }

        /// <summary>Creates a context. optionsJson is null (or "{}") for the defaults, or a JSON object
        /// with "backend", "device", "strict", "threads", "deterministic", "seed", "default_dtype",
        /// "map_checkpoints" and "cache", as nnrt.h describes at nnrt_context_create.</summary>
        /// <exception cref="NnrtException">InvalidArgument for bad options (the message names the key),
        /// NoDevice or Backend when the named backend cannot be used.</exception>
        /// <exception cref="DllNotFoundException">libnnrt could not be loaded.</exception>
        public Context(string optionsJson = null)
        {
            Library.EnsureCompatible();
            ContextHandle handle;
            Check.Ok(Native.nnrt_context_create(Utf8.Encode(optionsJson), out handle));
            Handle = handle;
        }

        /// <summary>The context as JSON: selected backend, device, threads, every usable backend, every
        /// plugin found (with the reason one failed to load), devices and cache counters.</summary>
        public string Describe()
        {
            return Utf8.Query((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                              Native.nnrt_context_describe(Handle, buf, cap, out len));
        }

        /// <summary>Runs the op `name` (nnrt_op) on this context's backend and returns its `outputs` new
        /// arrays. attrsJson is null or a JSON object of attributes; nnrt.h lists the ops and their
        /// attributes. An unknown op is Status.Unsupported.</summary>
        public NdArray[] Op(string name, NdArray[] inputs, string attrsJson, int outputs)
        {
            if (name == null) throw new ArgumentNullException("name");
            if (outputs < 0) throw new ArgumentOutOfRangeException("outputs");
            inputs = inputs ?? new NdArray[0];
            var pointers = new IntPtr[inputs.Length];
            var referenced = new bool[inputs.Length];
            try
            {
                // The input pointers travel in a plain IntPtr[], which the marshaler does not reference
                // count; these references keep a concurrent Dispose from freeing an input mid-call.
                for (int i = 0; i < inputs.Length; i++)
                {
                    if (inputs[i] == null) throw new ArgumentNullException("inputs", "input " + i + " is null");
                    inputs[i].Handle.DangerousAddRef(ref referenced[i]);
                    pointers[i] = inputs[i].Handle.DangerousGetHandle();
                }
                var results = new IntPtr[outputs];
                Check.Ok(Native.nnrt_op(Handle, Utf8.Encode(name), pointers, pointers.Length,
                                        Utf8.Encode(attrsJson), results, outputs));
                var arrays = new NdArray[outputs];
                for (int i = 0; i < outputs; i++) arrays[i] = new NdArray(this, new ArrayHandle(results[i]));
                return arrays;
            }
            finally
            {
                for (int i = 0; i < inputs.Length; i++)
                    if (referenced[i]) inputs[i].Handle.DangerousRelease();
            }
        }

        /// <summary>Runs an op with one output: Op(name, inputs, attrsJson, 1)[0].</summary>
        public NdArray Op(string name, string attrsJson, params NdArray[] inputs)
        {
            return Op(name, inputs, attrsJson, 1)[0];
        }

        /// <summary>An array of the given shape with every element set to value (op "fill").</summary>
        public NdArray Fill(double value, DType dtype, params long[] shape)
        {
            return Op("fill", new JsonObject().Add("shape", shape).Add("value", value)
                                  .Add("dtype", DTypes.JsonName(dtype)).ToString());
        }

        /// <summary>Uniform random numbers in [low, high) (op "random_uniform"); the same seed gives the
        /// same numbers on every backend. A null seed uses the context's.</summary>
        public NdArray RandomUniform(long[] shape, long? seed = null, double low = 0, double high = 1,
                                     DType dtype = DType.F32)
        {
            var attrs = new JsonObject().Add("shape", shape).Add("low", low).Add("high", high)
                                        .Add("dtype", DTypes.JsonName(dtype));
            if (seed.HasValue) attrs.Add("seed", seed.Value);
            return Op("random_uniform", attrs.ToString());
        }

        /// <summary>Normal random numbers (op "random_normal"). A null seed uses the context's.</summary>
        public NdArray RandomNormal(long[] shape, long? seed = null, double mean = 0, double std = 1,
                                    DType dtype = DType.F32)
        {
            var attrs = new JsonObject().Add("shape", shape).Add("mean", mean).Add("std", std)
                                        .Add("dtype", DTypes.JsonName(dtype));
            if (seed.HasValue) attrs.Add("seed", seed.Value);
            return Op("random_normal", attrs.ToString());
        }

        /// <summary>Releases this reference to the context.</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
